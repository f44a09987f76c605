"""What an idea run tells its reader: a warning when even the best evidence is weak, a match
per work that differs when the evidence does, one line for providers that did not answer,
counts while the long stages run, and `crase idea-audit RUN --summary`."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.api.commands.idea import summary_lines
from crase.bench.loopback_http import free_port
from crase.graph import Graph
from crase.idea.assessment import match_strength, weak_match_warning
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.protocols import IdeaBackends
from crase.run_lifecycle import Callbacks
from crase.settings import ProviderSettings
from tests.idea.corpus import IDEA

# Nothing in the fixture corpus (few-shot learning on graphs) is about this.
OFF_TOPIC = ("Measure how the morphology of epithelial cells changes during tissue growth "
             "from time-lapse microscopy of developing organs.")


@pytest.mark.parametrize(("grade", "similarity", "words"), [
    (3, 0.6, "strong"), (2, 0.4, "partial"), (1, 0.3, "weak"), (1, 0.16, "very weak"),
    (0, 0.5, "very weak"), (None, 0.9, "unassessed")])
def test_the_match_splits_a_weak_grade_by_similarity(
        grade: int | None, similarity: float, words: str) -> None:
    assert match_strength(grade, similarity) == words


def test_a_weak_match_is_warned_with_its_evidence() -> None:
    warning = weak_match_warning([1, 1, 1, 1, 1], [0.07, 0.12, 0.16, 0.1, 0.09])
    assert warning is not None
    assert warning.startswith("weak match: the best evidence is weak (best grade 1 of 3, "
                              "idea-paper similarity 0.07-0.16)")
    assert "crase load DIR" in warning
    assert weak_match_warning([2, 1, 1], [0.5, 0.2, 0.1]) is None
    assert weak_match_warning([], []) is None


@pytest.mark.integration
def test_an_off_topic_idea_warns_counts_and_folds_the_providers(
        corpus: Graph, offline_backends: IdeaBackends, cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    backends = replace(offline_backends, providers=ProviderSettings(
        semantic_scholar_url=closed, crossref_url=closed, arxiv_url=closed, enabled=True,
        max_retries=0))
    result = run_idea(corpus, backends, IdeaRequest(idea=OFF_TOPIC, providers=True))
    assert len(result.warnings) == 1 and result.warnings[0].startswith("weak match")
    assert {p.match for p in result.papers} <= {"weak", "very weak", "unassessed"}

    providers = [n for n in result.incomplete if "provider" in n]
    assert len(providers) == 1, result.incomplete
    assert providers[0].startswith("providers not reachable, searched the corpus only: "
                                   "semantic_scholar, crossref, arxiv")

    assert main(["idea-audit", result.run_id, "--summary"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == summary_lines(result.audit)
    assert out.startswith(f"Run {result.run_id}: outcome ")
    assert "Where candidates were lost:" in out and "Found      " in out
    assert "Warning: weak match" in out and not out.lstrip().startswith("{")
    assert main(["idea-audit", result.run_id]) == 0
    assert json.loads(capsys.readouterr().out)["run_id"] == result.run_id


@pytest.mark.integration
def test_works_with_different_evidence_show_different_matches_and_counts_move(
        corpus: Graph, offline_backends: IdeaBackends) -> None:
    counts: list[tuple[str, int, int]] = []
    result = run_idea(corpus, offline_backends,
                      IdeaRequest(idea=IDEA, exclude=["src"], providers=False),
                      observer=Callbacks(on_items=lambda *c: counts.append(c)))
    assert len(result.papers) == 5 and not result.warnings
    assessed = [c for c in counts if c[0] == "assessment"]
    assert assessed[0][1] == 0 and assessed[-1][1] == assessed[-1][2] > 0
    assert result.counts["selected_for_assessment"] == assessed[-1][2]
    assert len({(p.match, p.similarity) for p in result.papers}) > 1
    for paper in result.papers:
        assert paper.match == match_strength(paper.grade, paper.similarity)
    assert result.audit["final_ranking"][0]["match"] == result.papers[0].match
