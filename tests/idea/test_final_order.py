"""The idea workflow's learned final order: the same bytes from the same shortlists, a file
checked before use, monotone in its signals, and the offline expert ordering by it under
its own name (server-free)."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from crase.errors import RankingModelInvalid
from crase.idea.final_order.model import (
    FEATURES,
    SHIPPED_MODEL,
    feature_rows,
    fit_final_order,
    read_final_order,
)
from crase.idea.roles import model_calls
from crase.idea.roles.offline_expert import EXPERT, LEARNED_EXPERT, OfflineExpert
from crase.models import lambdarank
from crase.models.chat import ModelRunner
from crase.models.lambdarank import Group
from tests.idea.builders import structure
from tests.idea.test_expert import FixedEncoder


def shortlists(count: int, seed: int) -> list[Group]:
    """Shortlists where the relevant works have more links and a higher fused score."""
    generator = np.random.default_rng(seed)
    groups = []
    for _ in range(count):
        labels = (generator.random(20) < 0.2).astype(float)
        fused = generator.random(20) * 0.03 + labels * 0.01
        similarity = generator.random(20) * 0.5 + labels * 0.2
        links = generator.poisson(0.3 + 1.5 * labels)
        groups.append(Group(feature_rows(fused, similarity, links), labels))
    return groups


def test_the_same_shortlists_give_the_same_bytes(tmp_path: Path) -> None:
    first = fit_final_order(shortlists(60, 1), "x")
    second = fit_final_order(shortlists(60, 1), "x")
    assert first.ranking.text == second.ranking.text
    path = tmp_path / "mine.txt"
    path.write_text(first.ranking.text, encoding="utf-8")
    read = read_final_order(path)
    assert read.name == "mine"
    rows = feature_rows([0.01, 0.02], [0.3, 0.6], [0, 3])
    assert np.array_equal(read.scores(rows), first.scores(rows))


def test_a_file_that_is_not_a_final_order_model_is_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not a model", encoding="utf-8")
    with pytest.raises(RankingModelInvalid, match="not a LightGBM model"):
        read_final_order(garbage)
    other = lambdarank.fit(shortlists(40, 2), ("similarity", "grade", "links"))
    other_file = tmp_path / "other.txt"
    other_file.write_text(other.text, encoding="utf-8")
    with pytest.raises(RankingModelInvalid, match="other features"):
        read_final_order(other_file)
    with pytest.raises(RankingModelInvalid, match="train one with `crase train-idea-order`"):
        read_final_order(tmp_path / "missing.txt")
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"x" * 1_000_001)
    with pytest.raises(RankingModelInvalid, match="not a final order model"):
        read_final_order(huge)


def test_the_shipped_model_never_lowers_a_work_for_more_evidence() -> None:
    """Monotone in each signal: a higher fused score, a closer abstract or one more
    citation link never lowers a work."""
    model = read_final_order(SHIPPED_MODEL)
    assert model.ranking.features == FEATURES
    grid = np.linspace(0.0, 0.06, 31)
    for similarity in (0.2, 0.5, 0.8):
        for links in range(6):
            rows = feature_rows(grid, [similarity] * len(grid), [links] * len(grid))
            scores = model.scores(rows)
            assert np.all(np.diff(scores) >= 0), (similarity, links)
            more = model.scores(feature_rows(grid, [similarity] * len(grid),
                                             [links + 1] * len(grid)))
            closer = model.scores(feature_rows(grid, [similarity + 0.1] * len(grid),
                                               [links] * len(grid)))
            assert np.all(more >= scores) and np.all(closer >= scores), (similarity, links)


def entries() -> list[model_calls.ShortlistEntry]:
    abstract = "Graph passing few shot image classification."
    return [model_calls.ShortlistEntry(model_calls.IdeaPaper(pid, "Graph few shot", abstract,
                                                             2020), pid, "unavailable", (),
                                       {"grade": 2}, text_rank=rank)
            for pid, rank in (("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5), ("f", 6))]


def test_the_offline_expert_orders_by_the_learned_model_and_names_it() -> None:
    learned = OfflineExpert(FixedEncoder(), read_final_order(SHIPPED_MODEL))
    fused = OfflineExpert(FixedEncoder())
    assert fused.name == EXPERT and learned.name == f"{LEARNED_EXPERT}:hepth-pre2003"
    plain = entries()
    by_fusion = [i.paper_id for i in fused.rank(ModelRunner(), structure(), plain).ranking]
    outcome = learned.rank(ModelRunner(), structure(), plain)
    # No citation links: the fusion's order, whatever the model's steps.
    assert outcome.backend == learned.name
    assert [i.paper_id for i in outcome.ranking] == by_fusion == ["a", "b", "c", "d", "e"]
    assert outcome.ranking[0].reason.startswith("Learned final order score")
    # The last work of the fusion, linked to the idea's seeds, moves into the five.
    linked = [*plain[:-1], replace(plain[-1], neighbour_links=3)]
    ranked = [i.paper_id for i in learned.rank(ModelRunner(), structure(), linked).ranking]
    assert "f" in ranked
    assert "3 citation link(s)" in next(
        i.reason for i in learned.rank(ModelRunner(), structure(), linked).ranking
        if i.paper_id == "f")


def test_links_do_not_lift_a_work_the_idea_does_not_speak_of() -> None:
    """The case that made similarity a feature: on a small graph, two citation links put
    off-topic works (cosine 0.44, no shared words) above the on-topic one (0.86)."""
    model = read_final_order(SHIPPED_MODEL)
    on_topic, off_topic = model.scores(feature_rows([0.0492, 0.0464], [0.86, 0.44], [0, 2]))
    assert on_topic > off_topic
