"""How `crase search` shows its results: the table (authors, links), the evidence lines
(titles, word boundaries, scores and Delta in words), the --json fields, the Run's plain
parameters and the lighter query that opens a run in Neo4j Browser."""

import json
from pathlib import Path
from typing import Any, LiteralString, cast

import pytest

from crase.api.cli import main
from crase.api.commands.search import describe_evidence, short_authors
from crase.graph import Graph
from crase.models.minilm import SentenceEncoder
from crase.run_lifecycle import browser_query
from crase.search.evidence import (
    EdgeEvidence,
    PaperEvidence,
    clip,
    describe_delta,
    describe_order,
)
from crase.search.pipeline import RankedPaper
from tests.api.corpus import ORPHAN, QUERY

LONG_CLAIM = ("The tension of the unstable D-brane is exactly cancelled by the negative "
              "energy of the tachyon potential at its minimum")


def paper(evidence: PaperEvidence, score: float = 0.1, rank: int = 1) -> RankedPaper:
    return RankedPaper(rank, "p", score, "A title", 2003, [], evidence)


def test_a_full_text_match_says_the_graph_did_not_reach_it() -> None:
    lines = describe_evidence(paper(PaperEvidence(seed=False, reached_from=None,
                                                  text_match=True)), None)
    assert lines == ["full-text match of the query; the evidence graph did not reach it"]


def test_a_walked_paper_names_its_seed_by_title_and_explains_delta() -> None:
    edge = EdgeEvidence("p", "s", 0.8, "citing claim", "cited claim", 0.71)
    titles = {"s": "Tachyon condensation in string field theory"}
    lines = describe_evidence(paper(PaperEvidence(seed=False, reached_from="s",
                                                  path=[edge])), None, titles)
    assert lines[0] == (
        '1 hop from seed "Tachyon condensation in string field theory" (cites it); '
        'strongest edge: '
        'cites "Tachyon condensation in string field theory", Delta 0.80 (strong support: '
        "80% of the citing paper's claims grounded)")
    assert lines[1] == '  "citing claim" grounded by "cited claim" (entailment 0.71)'


def test_without_a_title_the_id_is_named() -> None:
    edge = EdgeEvidence("q", "p", 1.0)
    lines = describe_evidence(paper(PaperEvidence(seed=False, reached_from="q",
                                                  path=[edge])), None, {})
    assert lines == ["1 hop from seed q (cited by it)"]


def test_a_longer_walk_names_the_last_citation_by_title() -> None:
    path = [EdgeEvidence("s", "m", 1.0), EdgeEvidence("p", "m", 1.0)]
    titles = {"s": "The seed", "m": "The middle paper"}
    lines = describe_evidence(paper(PaperEvidence(seed=False, reached_from="s", path=path)),
                              None, titles)
    assert lines == ['2 hops from seed "The seed"; via: cites "The middle paper"']


def test_claims_end_at_a_word_boundary() -> None:
    edge = EdgeEvidence("p", "s", 0.3, LONG_CLAIM, LONG_CLAIM, 0.5)
    line = describe_evidence(paper(PaperEvidence(seed=False, reached_from="s",
                                                 path=[edge])), None)[1]
    quoted = line.split('"')[1]
    assert quoted.endswith("...") and len(quoted) <= 70
    assert LONG_CLAIM.startswith(quoted.removesuffix("..."))
    assert LONG_CLAIM[len(quoted) - 3] == " "  # the cut falls between two words
    assert clip("short text", 70) == "short text"


@pytest.mark.parametrize(("delta", "words"), [
    (0.41, "moderate support"), (0.5, "strong support"), (0.1, "weak support"),
    (0.0, "no support")])
def test_delta_in_words(delta: float, words: str) -> None:
    assert describe_delta(delta).startswith(f"Delta {delta:.2f} ({words}: {delta:.0%} ")


def test_a_score_is_explained_by_rank_and_share() -> None:
    scores = [0.1, 0.05, 0.03, 0.02031] + [0.01] * 46
    lines = describe_evidence(paper(PaperEvidence(seed=True, reached_from="p"), 0.02031, 4),
                              None, {}, scores)
    assert lines[1] == ("walk score 0.02031: rank 4 of 50, 3.1% of the list's total "
                        "(average 2.0%)")


def test_a_learned_order_shows_the_model_score_and_its_features() -> None:
    evidence = PaperEvidence(seed=True, reached_from="p",
                             ranking_features={"text_hit_votes": 2.43, "walk_reached": -0.83})
    lines = describe_evidence(paper(evidence, 4.372, 1), None, {}, [4.372, 4.1])
    assert lines[-1] == ("model score +4.372, placed by: text_hit_votes +2.43, "
                         "walk_reached -0.83")
    assert not any("walk score" in line for line in lines)


def test_the_order_line_says_what_placed_the_list() -> None:
    model = {"name": "hepth-pre2003",
             "training": {"corpus": "hep-th", "source_year_min": 2002, "source_year_max": 2002}}
    assert describe_order({"order": "learned", "placed_by": "model", "model": model}) == (
        "learned, model hepth-pre2003 (trained on hep-th 2002 papers); each paper shows the "
        "features that placed it")
    thin = "the walk ranked 10 papers, fewer than k = 50: the query's own text ranking"
    assert describe_order({"order": "learned", "placed_by": "text", "not_applied": thin}) == (
        "not the learned model: " + thin)
    assert describe_order({"order": "walk", "placed_by": "walk"}) == (
        "the walk's scores (order=walk)")


def test_authors_are_short() -> None:
    assert short_authors(["A. Sen", "B. Zwiebach", "C. Third"]) == "A. Sen et al."
    assert short_authors(["A. Sen"]) == "A. Sen"
    assert short_authors([]) == "-"
    assert short_authors(["Author Tachyon 10", "B"]) == "Author Tachyon 10 et al."
    assert short_authors(["A very long first author name indeed", "B"], 22) == \
        "A very long... et al."


def run_search_command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    code = main(["search", QUERY, "-k", "8", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


@pytest.mark.integration
def test_the_table_has_authors_and_links_and_opens_only_returned_and_seeds(
        corpus: dict[str, Any], graph: Graph, cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out, err = run_search_command(capsys, "--tau", "0.2")
    assert any(line.startswith("Order: ") for line in out.splitlines())
    header = next(line for line in out.splitlines() if line.lstrip().startswith("rank"))
    assert "authors" in header and "link" in header
    assert "Author Tachyon" in out and " et al." in out
    assert "https://arxiv.org/abs/hep-th/94" in out
    assert "\r" not in err  # a pipe gets plain lines, never a carriage return
    run_id = out.split()[1].rstrip(":")
    assert browser_query(run_id) in out and "RETURNED|SEEDED" in out

    # The Run holds its parameters as plain properties, next to the JSON string.
    with graph.driver.session(database=graph.database) as session:
        plain = session.run("MATCH (r:Run {id: $id}) RETURN r.tau AS tau, r.k AS k, "
                            "r.theta AS theta, r.walk AS walk, r.params AS params",
                            id=run_id).single()
    assert plain is not None
    assert (plain["tau"], plain["k"], plain["walk"]) == (0.2, 8, "ppr")
    assert plain["theta"] == json.loads(plain["params"])["params"]["theta"]

    # The lighter query shows the returned papers and the seeds, not all considered ones.
    with graph.driver.session(database=graph.database) as session:
        query = cast(LiteralString, browser_query(run_id) + ", type(x) AS kind")
        kinds = {r["kind"] for r in session.run(query)}
    assert kinds <= {"RETURNED", "SEEDED"} and "RETURNED" in kinds


@pytest.mark.integration
def test_json_results_carry_identifiers_abstract_venue_and_links(
        corpus: dict[str, Any], cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = run_search_command(capsys, "--json")
    results = json.loads(out)["results"]
    assert results
    for result in results:
        assert {"arxiv_id", "doi", "abstract", "authors", "venue", "links"} <= result.keys()
    tachyon = next(r for r in results if r["id"].startswith("tachyon-"))
    assert tachyon["links"] == {"arxiv": f"https://arxiv.org/abs/{tachyon['arxiv_id']}"}
    assert tachyon["abstract"] and tachyon["authors"][0].startswith("Author Tachyon")
    orphan = next((r for r in results if r["id"] == ORPHAN["id"]), None)
    if orphan is not None:  # no identifier: no link, and it still has its fields
        assert orphan["links"] == {} and orphan["doi"] is None


@pytest.mark.integration
def test_the_same_query_again_reads_its_vector_and_runs_no_encoder(
        corpus: dict[str, Any], cli_env: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = run_search_command(capsys)
    stores = list((cli_env / "var" / "embedding-cache").glob("*.sqlite3"))
    assert len(stores) == 1  # the paper encoder's, as the idea workflow's cache names it

    def no_forward_pass(self: SentenceEncoder, texts: list[str]) -> None:
        raise AssertionError(f"the encoder ran on {texts}")

    monkeypatch.setattr(SentenceEncoder, "encode_uncached", no_forward_pass)
    again, _ = run_search_command(capsys)
    assert table_rows(first) and table_rows(again) == table_rows(first)


def table_rows(out: str) -> list[str]:
    """The ranked rows of a printed search (the run id and timings differ run to run)."""
    return [line for line in out.splitlines() if line[:4].strip().isdigit()]
