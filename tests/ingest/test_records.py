"""Row-level validation: each refusal has its own kind and a readable reason; author
lists repaired, with the repair noted."""

import json
import time

import pytest

from crase.graph import Graph
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import load_corpus
from crase.ingest.records import (
    DEFAULT_LIMITS,
    Citation,
    Limits,
    Paper,
    RejectKind,
    check_edge,
    repair_authors,
    split_name,
    validate_paper,
)
from crase.ingest.registry import paper_fingerprint
from crase.ingest.rejects import read_notes
from crase.settings import Settings
from tests.sample_slice import SAMPLE

SAMPLE_ZANELLI = ["M\\'aximo Ba\\~nados", "Claudio Teitelboim", "and Jorge Zanelli"]


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
    # No abstract is left out, so it cannot erase one a graph already holds.
    assert paper.graph_properties() == {"title": "A title", "year": 2003,
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
    ({"id": 3.25, "title": "T"}, RejectKind.BAD_ID),
    ({"id": "p1", "title": "T", "authors": {"name": "an object"}}, RejectKind.INVALID_FIELD),
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


# Author names: repaired at validation, the repair noted, the unrepairable refused ----------
def sample_papers() -> dict[str, Paper]:
    rows = (json.loads(line) for line in (SAMPLE / "papers.jsonl").open(encoding="utf-8"))
    papers = {}
    for row in rows:
        paper = validate_paper(row)
        assert isinstance(paper, Paper), (row["id"], paper)
        papers[paper.id] = paper
    return papers


def test_the_sample_author_lists_are_repaired_and_each_repair_noted() -> None:
    raw = [json.loads(line) for line in (SAMPLE / "papers.jsonl").open(encoding="utf-8")]
    linked = {row["id"] for row in raw
              if any(name.lower().startswith("and ") for name in row.get("authors") or [])}
    papers = sample_papers()
    assert len(papers) == 3000 and len(linked) == 108
    repaired = {pid for pid, paper in papers.items() if paper.repairs}
    # The 108 lists with a linking "and", and two with a "Jr." cut off from its name.
    assert repaired == linked | {"9708147", "0201096"}
    assert not [name for paper in papers.values() for name in paper.authors
                if name.lower().startswith("and ") or name.lower().endswith(" and")
                or not name.strip()]
    zanelli = papers["9204099"]
    assert zanelli.authors == ["M\\'aximo Ba\\~nados", "Claudio Teitelboim", "Jorge Zanelli"]
    assert zanelli.repairs == {"repaired_authors": ["'and Jorge Zanelli' -> 'Jorge Zanelli'"]}
    assert papers["9511173"].authors == ["Curtis G. Callan Jr.", "Igor R. Klebanov"]
    assert papers["9204099"].graph_properties()["authors"] == zanelli.authors  # no notes


@pytest.mark.parametrize(("authors", "repaired"), [
    (["A. Smith", "", "and", " and B. Jones and"], ["A. Smith", "B. Jones"]),
    (["A. Smith and and B. Jones", "C. Doe,"], ["A. Smith", "B. Jones", "C. Doe"]),
    ([", A. Smith ,", "and and C. Doe"], ["A. Smith", "C. Doe"]),
    (["Anand Rao", "Sandy Brandt"], ["Anand Rao", "Sandy Brandt"]),  # "and" inside words
    (["Smith, J."], ["Smith, J."]),  # a "Last, First" name keeps its comma
])
def test_author_repairs(authors: list[str], repaired: list[str]) -> None:
    result = repair_authors(authors)
    assert result.names == repaired
    assert bool(result.notes) == (authors != repaired)


def test_authors_given_as_one_string_are_one_author_noted() -> None:
    paper = validate_paper({"id": "p", "title": "T", "authors": "Smith, J. and Doe, A."})
    assert isinstance(paper, Paper) and paper.authors == ["Smith, J. and Doe, A."]
    assert paper.repairs == {"repaired_authors": [
        "authors given as one string, not a list: kept as one author"]}
    blank = validate_paper({"id": "p", "title": "T", "authors": "  "})
    assert isinstance(blank, Paper) and blank.authors == []
    assert blank.repairs == {"repaired_authors": [
        "authors given as one string, not a list: '  ' dropped, no name in it"]}


def test_a_name_without_a_letter_is_dropped_and_noted() -> None:
    paper = validate_paper({"id": "p", "title": "T", "authors": ["A. Smith", "1994"]})
    assert isinstance(paper, Paper) and paper.authors == ["A. Smith"]
    assert paper.repairs == {"repaired_authors": ["'1994' dropped: no letter in it"]}
    assert kind_of({"id": "p", "title": "T", "authors": ["***"]}) is None


@pytest.mark.integration
def test_loading_the_sample_stores_repaired_names_and_notes_them(
        graph: Graph, settings: Settings) -> None:
    files = locate_corpus(SAMPLE)
    report = load_corpus(graph, files, settings, show_progress=False)
    assert report.status == "loaded" and report.repaired == 110
    assert report.rejects == {} and report.papers.accepted == 3000
    assert report.notes_path is not None
    notes = {note["paper"]: note for note in read_notes(report.notes_path)}
    assert len(notes) == 110 and notes["9204099"]["kind"] == "repaired_authors"
    assert notes["9204099"]["notes"] == ["'and Jorge Zanelli' -> 'Jorge Zanelli'"]
    assert stored_authors(graph, "9204099")[-1] == "Jorge Zanelli"

    # A graph loaded before the repair existed: the old names, and a checkpoint of a
    # finished load without the rules' version. The same command loads it again.
    with graph.driver.session(database=graph.database) as session:
        session.run("MATCH (p:Paper {id: '9204099'}) SET p.authors = $authors",
                    authors=SAMPLE_ZANELLI).consume()
    checkpoint = json.loads(report.checkpoint_path.read_text())
    del checkpoint["counts"]["validation_version"]
    report.checkpoint_path.write_text(json.dumps(checkpoint))
    again = load_corpus(graph, files, settings, show_progress=False)
    assert again.status == "loaded" and again.repaired == 110
    assert stored_authors(graph, "9204099")[-1] == "Jorge Zanelli"
    assert load_corpus(graph, files, settings, show_progress=False).status == "unchanged"


def stored_authors(graph: Graph, paper_id: str) -> list[str]:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (p:Paper {id: $id}) RETURN p.authors AS authors",
                             id=paper_id).single()
    assert record is not None
    return list(record["authors"])


def test_a_name_of_many_linking_ands_is_read_at_once() -> None:
    # `(?:\s+and)+$` from every space: 7 s of one regex call for 80,000 characters.
    started = time.thread_time()
    assert split_name("A. Smith " + "and " * 20_000 + "B. Jones") == ["A. Smith", "B. Jones"]
    assert time.thread_time() - started < 0.5
