"""The Semantic Scholar datasets as AI2 ships them: corpus ids as JSON strings or integers,
`intents` flat or one list per context, and a reject or a count for every row not kept.

The shapes are those of AI2's published samples of the `papers`, `abstracts` and
`citations` datasets (two releases: integer `corpusid` in papers and abstracts, string
`citingcorpusid` / `citedcorpusid`, flat `intents`); rows with the other spelling of an id
are made from them."""

import gzip
import json
from pathlib import Path
from typing import Any

from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.records import DEFAULT_LIMITS
from crase.ingest.s2ag import citation_signals, corpus_key, stage_s2ag
from tests.ingest.test_openalex import rejects_of, staged

UPDATED = "2022-01-27T03:01:26.115Z"


def paper_row(corpus_id: Any, title: str, doi: str) -> dict[str, Any]:
    """A papers row in the published sample's shape and field order."""
    return {"corpusid": corpus_id,
            "externalids": {"ACL": None, "DBLP": None, "ArXiv": None, "MAG": "3032046382",
                            "CorpusId": str(corpus_id), "PubMed": None, "DOI": doi,
                            "PubMedCentral": None},
            "url": f"https://www.semanticscholar.org/paper/{corpus_id:0>40}",
            "title": title, "authors": [{"authorId": "101039255", "name": "Jane Roe"}],
            "venue": "", "publicationvenueid": None, "year": 2006, "referencecount": 0,
            "citationcount": 0, "influentialcitationcount": 0, "isopenaccess": False,
            "s2fieldsofstudy": [{"category": "Education", "source": "s2-fos-model"}],
            "publicationtypes": None, "publicationdate": "2006-02-28",
            "journal": {"name": "", "pages": "50-51", "volume": "5"}, "updated": UPDATED}


def abstract_row(corpus_id: Any, abstract: Any) -> dict[str, Any]:
    return {"corpusid": corpus_id,
            "openaccessinfo": {"externalids": {"MAG": "2418524938", "ACL": None, "DOI": None,
                                               "PubMedCentral": None, "ArXiv": None},
                               "license": None, "url": None, "status": None},
            "abstract": abstract, "updated": UPDATED}


def citation_row(citing: Any, cited: Any, intents: Any,
                 influential: bool = False) -> dict[str, Any]:
    return {"citingcorpusid": citing, "citedcorpusid": cited, "isinfluential": influential,
            "contexts": ["Schlaadt and Shannon argued that teachers are not prepared [2]."],
            "intents": intents, "updated": UPDATED}


def write_datasets(root: Path, **datasets: list[Any]) -> Path:
    """Each dataset's rows (objects, or raw text lines) as one gzipped shard."""
    for name, rows in datasets.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        text = "".join((row if isinstance(row, str) else json.dumps(row, separators=(",", ":")))
                       + "\n" for row in rows)
        with gzip.open(root / name / "part-0.gz", "wb") as out:
            out.write(text.encode())
    return root


PAPERS = [paper_row(223588394, "Attaching Importance to Mental Quality Education", "10.1/a"),
          paper_row(231810694, "BEQ volume 20 issue 4 Back matter", "10.1/b"),
          paper_row(173519558, "Der Trust als Klaeger im deutschen Zivilprozess", "10.1/c")]


def test_corpus_ids_are_read_as_integers_or_strings_of_digits() -> None:
    assert corpus_key(20187272) == corpus_key("20187272") == "20187272"
    for unreadable in (True, 3.0, "abc", "", "12a", [1], None, -5, "-5"):
        assert corpus_key(unreadable) is None


def test_flat_intents_are_kept_as_the_published_samples_write_them() -> None:
    assert citation_signals({"isinfluential": False, "intents": ["background", "methodology"]}
                            ) == {"isinfluential": False,
                                  "intents": ["background", "methodology"]}
    # One list per context (the documented shape) still reads the same.
    assert citation_signals({"intents": [["methodology"], ["background", "methodology"]]}
                            )["intents"] == ["methodology", "background"]


def test_every_citation_of_the_published_shape_is_kept_with_its_intents(
        tmp_path: Path) -> None:
    datasets = write_datasets(tmp_path / "s2ag", papers=PAPERS, citations=[
        citation_row("223588394", "231810694", ["background", "methodology"], True),
        citation_row("231810694", "173519558", ["methodology"]),
        citation_row("223588394", None, ["background"]),  # an unresolved reference
        citation_row("173519558", "223588394", None)])
    report = stage_s2ag(datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    assert staged(tmp_path / "staged")[1] == [("doi:10.1/a", "doi:10.1/b"),
                                              ("doi:10.1/b", "doi:10.1/c"),
                                              ("doi:10.1/c", "doi:10.1/a")]
    signals = [json.loads(line) for line in
               (tmp_path / "staged" / "citation_signals.jsonl").read_text().splitlines()]
    assert [(row["isinfluential"], row["intents"]) for row in signals] == [
        (True, ["background", "methodology"]), (False, ["methodology"]), (False, [])]
    assert report.edges_kept == 3 and report.edges_outside == 1
    assert rejects_of(report.rejects_path) == []


def test_papers_and_abstracts_with_string_ids_are_kept_and_joined(tmp_path: Path) -> None:
    papers = [{**row, "corpusid": str(row["corpusid"])} for row in PAPERS]
    datasets = write_datasets(tmp_path / "s2ag", papers=papers, abstracts=[
        abstract_row("223588394", "A first abstract."), abstract_row(231810694, "A second.")],
        citations=[citation_row("223588394", "231810694", ["background"])])
    report = stage_s2ag(datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    kept, edges = staged(tmp_path / "staged")
    assert [(paper["id"], paper.get("abstract")) for paper in kept] == [
        ("doi:10.1/a", "A first abstract."), ("doi:10.1/b", "A second."), ("doi:10.1/c", None)]
    assert edges == [("doi:10.1/a", "doi:10.1/b")]
    assert rejects_of(report.rejects_path) == []
    assert (report.abstracts_joined, report.abstracts_unjoined) == (2, 0)


def test_every_row_not_kept_has_a_reject_or_a_count(tmp_path: Path) -> None:
    datasets = write_datasets(tmp_path / "s2ag", papers=[*PAPERS, paper_row("x1", "T", "10.1/d")],
                              abstracts=[
        abstract_row("223588394", "Joined."),
        abstract_row(777, "Of a paper no papers shard holds."),  # counted, not joined
        abstract_row("not-an-id", "Unreadable id."),  # bad_id
        abstract_row(231810694, ["not", "text"]),  # invalid_field
        "[1, 2]"],  # not_an_object
        citations=[
        citation_row("223588394", "231810694", None),
        citation_row("abc", "231810694", None),  # bad_id
        citation_row("223588394", 1.5, None),  # bad_id
        "\"a string\"",  # not_an_object
        citation_row("223588394", "99999999", None)])  # counted outside the corpus
    report = stage_s2ag(datasets, tmp_path / "staged", DatasetFilter(), DEFAULT_LIMITS,
                        1_000_000)
    assert rejects_of(report.rejects_path) == [
        ("abstracts/part-0.gz", 3, "bad_id"), ("abstracts/part-0.gz", 4, "invalid_field"),
        ("abstracts/part-0.gz", 5, "not_an_object"), ("citations/part-0.gz", 2, "bad_id"),
        ("citations/part-0.gz", 3, "bad_id"), ("citations/part-0.gz", 4, "not_an_object"),
        ("papers/part-0.gz", 4, "bad_id")]
    assert (report.abstracts_joined, report.abstracts_unjoined) == (1, 1)
    assert (report.edges_kept, report.edges_outside) == (1, 1)
    reasons = {reject["line"]: reject["reason"] for reject in map(
        json.loads, report.rejects_path.read_text().splitlines())
        if reject["file"] == "citations/part-0.gz"}
    assert "citingcorpusid 'abc'" in reasons[2] and "citedcorpusid 1.5" in reasons[3]
