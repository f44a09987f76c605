"""The learned final order in a run and in training, on the real database: the audit
names the model that ordered the five, and a training idea leaves its shortlist as a
group and no Run behind."""

from dataclasses import replace

import pytest

from crase.graph import Graph
from crase.idea.final_order.model import FEATURES, SHIPPED_MODEL, read_final_order
from crase.idea.final_order.training import TrainingIdea, shortlist_group
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.offline_expert import LEARNED_EXPERT, OfflineExpert
from crase.idea.roles.protocols import IdeaBackends
from crase.settings import IdeaSettings
from tests.idea.corpus import IDEA

pytestmark = pytest.mark.integration


def run_count(graph: Graph) -> int:
    with graph.driver.session(database=graph.database) as session:
        return session.run("MATCH (r:Run) RETURN count(r) AS n").single()["n"]


def test_a_run_with_the_learned_order_names_its_model(corpus: Graph,
                                                      offline_backends: IdeaBackends) -> None:
    assert offline_backends.encoder is None  # the fixture's expert holds its own
    expert = offline_backends.expert
    assert isinstance(expert, OfflineExpert)
    learned = OfflineExpert(expert.encoder, read_final_order(SHIPPED_MODEL))
    result = run_idea(corpus, replace(offline_backends, expert=learned), IdeaRequest(
        idea=IDEA, exclude=["src"], year_min=2015, providers=False))
    assert result.ranking["backend"] == f"{LEARNED_EXPERT}:hepth-pre2003"
    assert result.backends["expert"] == result.ranking["backend"]
    assert [p.rank for p in result.papers] == [1, 2, 3, 4, 5]
    assert all(p.reason.startswith("Learned final order score") for p in result.papers)


def test_a_training_idea_gives_its_shortlist_and_leaves_no_run(
        corpus: Graph, offline_backends: IdeaBackends) -> None:
    expert = offline_backends.expert
    assert isinstance(expert, OfflineExpert)
    backends = replace(offline_backends, encoder=expert.encoder)
    before = run_count(corpus)
    idea = TrainingIdea("src", IDEA, 2022, frozenset({"fs1", "fs2", "cite1"}))
    group = shortlist_group(corpus, backends, IdeaSettings(), idea)
    assert run_count(corpus) == before
    assert group is not None and group.values.shape == (len(group.labels), len(FEATURES))
    assert group.labels.sum() >= 1  # a reference of the source was shortlisted
    assert set(group.values[:, FEATURES.index("neighbour_links")]) - {0.0}  # linked works
