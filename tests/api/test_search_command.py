"""How `crase search` describes each result's evidence in its table."""

from crase.api.commands.search import describe_evidence
from crase.search.evidence import EdgeEvidence, PaperEvidence
from crase.search.pipeline import RankedPaper


def paper(evidence: PaperEvidence) -> RankedPaper:
    return RankedPaper(1, "p", 0.1, "A title", 2003, [], evidence)


def test_a_full_text_match_says_the_graph_did_not_reach_it() -> None:
    lines = describe_evidence(paper(PaperEvidence(seed=False, reached_from=None,
                                                  text_match=True)), None)
    assert lines == ["full-text match of the query; the evidence graph did not reach it"]


def test_a_walked_paper_names_its_seed_and_best_grounded_edge() -> None:
    edge = EdgeEvidence("p", "s", 0.8, "citing claim", "cited claim", 0.71)
    lines = describe_evidence(paper(PaperEvidence(seed=False, reached_from="s",
                                                  path=[edge])), None)
    assert lines[0] == "1 hop from seed s; strongest edge p -> s (Delta 0.80)"
    assert '"citing claim" grounded by "cited claim" (0.71)' in lines[1]
