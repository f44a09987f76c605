"""TeX to plain Unicode (crase.scoring.tex.tex_to_unicode), on rows of data/sample."""

import json
from functools import cache
from typing import Any

import pytest

from crase.scoring.tex import tex_to_unicode
from tests.sample_slice import SAMPLE


@cache
def sample_rows() -> dict[str, dict[str, Any]]:
    rows = (json.loads(line) for line in (SAMPLE / "papers.jsonl").open(encoding="utf-8"))
    return {row["id"]: row for row in rows}


def test_accented_author_names_of_the_sample() -> None:
    assert sample_rows()["9204099"]["authors"][0] == "M\\'aximo Ba\\~nados"
    assert tex_to_unicode(sample_rows()["9204099"]["authors"][0]) == "Máximo Bañados"
    assert tex_to_unicode(sample_rows()["9209044"]["authors"][2]) == "and J. Fröhlich"
    assert tex_to_unicode(sample_rows()["9701122"]["authors"][2]) == (
        "and Jesús Puente Peñalba")


@pytest.mark.parametrize(("paper_id", "expected"), [
    ("9206002", "Affine Solitons: A Relation Between Tau Functions, Dressing and Bäcklund "
                "Transformations"),
    ("9302026", "Poincaré Gauge Theory for Gravitational Forces in (1+1) Dimensions"),
    ("9802203", "On N=8 Supergravity on AdS_5 and N=4 Superconformal Yang-Mills theory"),
    ("9209003", "Fermions in the Lowest Landau Level: Bosonization, W_∞ Algebra, Droplets, "
                "Chiral Boson"),
])
def test_titles_of_the_sample_read_as_plain_text(paper_id: str, expected: str) -> None:
    assert tex_to_unicode(sample_rows()[paper_id]["title"]) == expected


@pytest.mark.parametrize(("tex", "plain"), [
    ("$AdS_3$ and {D}-Branes", "AdS_3 and D-Branes"),
    (r"\v{C}ech, {\'e}t\'e, \c{c}a, \ss, {\o}re", "Čech, été, ça, ß, øre"),
    (r'K"ahler manifolds', "Kähler manifolds"),  # the bare umlaut of old listings
    (r"Ro\v cek and \'\i", "Roček and í"),
    (r"$\alpha'$ corrections to $\phi''$", "α' corrections to φ''"),
    (r"${\cal N}=4$ on $AdS_5\times S^5$", "N=4 on AdS_5× S^5"),
    (r"Duality cascades and $\chi$SB", "Duality cascades and χSB"),  # not the macro \chiSB
    (r"5\$ \& 10\% of \#1", "5$ & 10% of #1"),
    ("``primary'' fields --- and N.~Shtykov", "“primary” fields — and N. Shtykov"),
    ("plain words stay", "plain words stay"),
])
def test_tex_to_unicode(tex: str, plain: str) -> None:
    assert tex_to_unicode(tex) == plain


def test_every_sample_title_loses_its_tex_marks() -> None:
    # An unmatched `$` (9401093 has one) is no math: it stays as written.
    titles = [row["title"] for row in sample_rows().values() if row["title"].count("$") % 2 == 0]
    assert len(titles) == 2999
    assert [title for title in map(tex_to_unicode, titles) if "\\" in title or "$" in title] == []
