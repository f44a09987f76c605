"""Row-level validation: each refusal has its own kind and a readable reason."""

import pytest

from crase.ingest.records import (
    DEFAULT_LIMITS,
    Citation,
    Limits,
    Paper,
    RejectKind,
    check_edge,
    validate_paper,
)
from crase.ingest.registry import paper_fingerprint


def kind_of(data: object, limits: Limits = DEFAULT_LIMITS) -> RejectKind | None:
    result = validate_paper(data, limits)
    return None if isinstance(result, Paper) else result[0]


def test_a_full_row_is_a_paper() -> None:
    paper = validate_paper({"id": " 0301003 ", "title": " A title ", "abstract": None,
                            "year": "2003", "authors": ["A. B"], "categories": "hep-th gr-qc",
                            "doi": "10.1000/ABC", "n_refs_total": 4})
    assert isinstance(paper, Paper)
    assert (paper.id, paper.title, paper.abstract, paper.year) == ("0301003", "A title", "",
                                                                  2003)
    assert paper.categories == ["hep-th", "gr-qc"]
    assert paper.doi == "10.1000/abc"
    assert paper.graph_properties() == {"title": "A title", "abstract": "", "year": 2003,
                                        "authors": ["A. B"], "doi": "10.1000/abc",
                                        "categories": ["hep-th", "gr-qc"]}


def test_numeric_ids_become_strings() -> None:
    paper = validate_paper({"id": 42, "title": "T"})
    assert isinstance(paper, Paper) and paper.id == "42"


@pytest.mark.parametrize(("data", "kind"), [
    ({"title": "no id"}, RejectKind.MISSING_ID),
    ({"id": "", "title": "empty id"}, RejectKind.MISSING_ID),
    ({"id": None, "title": "null id"}, RejectKind.MISSING_ID),
    ({"id": "p1"}, RejectKind.MISSING_TITLE),
    ({"id": "p1", "title": "   "}, RejectKind.MISSING_TITLE),
    ({"id": "p1", "title": "T", "year": "19x5"}, RejectKind.BAD_YEAR),
    ({"id": "p1", "title": "T", "year": 1999.5}, RejectKind.BAD_YEAR),
    ({"id": "p1", "title": "T", "year": True}, RejectKind.BAD_YEAR),
    ({"id": "p1", "title": "T", "year": 3021}, RejectKind.BAD_YEAR),
    ({"id": "p1", "title": "T", "year": 12}, RejectKind.BAD_YEAR),
    ({"id": "p1", "title": "T", "authors": "not a list"}, RejectKind.INVALID_FIELD),
    ([1, 2], RejectKind.NOT_AN_OBJECT),
    ("a string", RejectKind.NOT_AN_OBJECT),
])
def test_bad_rows_are_classified(data: object, kind: RejectKind) -> None:
    assert kind_of(data) == kind


def test_huge_fields_are_refused_by_the_limit() -> None:
    limits = Limits(max_field_chars=1000)
    assert kind_of({"id": "p", "title": "T", "abstract": "x" * 1001}, limits) == \
        RejectKind.HUGE_FIELD
    assert kind_of({"id": "p", "title": "T", "authors": ["x" * 600] * 2}, limits) == \
        RejectKind.HUGE_FIELD
    assert kind_of({"id": "p", "title": "T", "abstract": "x" * 1000}, limits) is None


def test_fingerprint_tells_repeats_from_conflicts() -> None:
    first = paper_fingerprint(Paper(id="p", title="T", year=2000, authors=["A"]))
    assert first == paper_fingerprint(Paper(id="p", title="T", year=2000, authors=["A"]))
    assert first != paper_fingerprint(Paper(id="p", title="T", year=2001, authors=["A"]))
    assert first != paper_fingerprint(Paper(id="p", title="T", year=2000, authors=["B"]))


def test_edges() -> None:
    assert check_edge("a", "b") is None
    assert check_edge("a", "a")[0] == RejectKind.SELF_CITATION  # type: ignore[index]
    assert check_edge("", "b")[0] == RejectKind.MALFORMED_EDGE  # type: ignore[index]
    with pytest.raises(ValueError, match="cites itself"):
        Citation(citing_id="a", cited_id="a")
