"""Pieces of the benchmark systems that need no database: the dense index search, rank
fusion, random corrupted seeds, the setting keys and the bootstrap intervals."""

import numpy as np
import pytest

from crase.bench.corruption import random_seeds
from crase.bench.significance import mean_difference, pooled_difference
from crase.bench.systems import (
    BenchQuery,
    WalkConfig,
    backfill_rankings,
    fuse_rankings,
)
from crase.ingest.paper_vectors import DenseIndex, paper_text
from crase.search.text_ranking import RRF_K, lucene_text
from crase.settings import SearchSettings


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_dense_search_ranks_by_cosine_and_leaves_out_excluded() -> None:
    index = DenseIndex(["a", "b", "c", "d"],
                       np.stack([unit(1, 0), unit(0, 1), unit(1, 1), unit(1, 0.1)]))
    query = unit(1, 0)
    assert [p for p, _ in index.search(query, 3, [])] == ["a", "d", "c"]
    hits = index.search(query, 3, ["a"])
    assert [p for p, _ in hits] == ["d", "c", "b"]
    assert hits[0][1] == pytest.approx(float(unit(1, 0.1) @ query))
    assert [p for p, _ in index.search(query, 10, ["a", "b", "c", "d"])] == []


def test_paper_text_reduces_tex() -> None:
    assert paper_text("$N=4$ Super Yang-Mills", "The $\\sigma$-model flows.") == \
        "N=4 Super Yang-Mills. The sigma -model flows."
    assert paper_text("Only a title", "") == "Only a title"


def test_reciprocal_rank_fusion_by_hand() -> None:
    fused = dict(fuse_rankings([["a", "b", "c"], ["b", "d"]], depth=10))
    assert fused["b"] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert fused["a"] == pytest.approx(1 / (RRF_K + 1))
    assert fused["d"] == pytest.approx(1 / (RRF_K + 2))
    assert [p for p, _ in fuse_rankings([["a", "b", "c"], ["b", "d"]], depth=3)] == \
        ["b", "a", "d"]  # a (1/61) before d (1/62)


def test_backfill_keeps_the_walk_and_fills_with_new_text_hits() -> None:
    assert backfill_rankings(["a", "b"], ["b", "c", "a", "d", "e"], depth=4) == \
        ["a", "b", "c", "d"]
    assert backfill_rankings(["a", "b", "c"], ["d"], depth=2) == ["a", "b"]
    assert backfill_rankings([], ["d", "e"], depth=5) == ["d", "e"]


def test_random_seeds_are_reproducible_and_never_relevant() -> None:
    corpus = [f"p{i}" for i in range(100)]
    query = BenchQuery("q7", "text", frozenset({"p1", "p2"}), "p3", 2003)
    first = random_seeds(corpus, query, 20)
    assert first == random_seeds(corpus, query, 20)
    assert len(set(first)) == 20 and not set(first) & {"p1", "p2", "p3"}
    other = BenchQuery("q8", "text", frozenset({"p1"}), "p3", 2003)
    assert random_seeds(corpus, other, 20) != first


def test_lucene_text_has_no_operators() -> None:
    assert lucene_text("Strings AND branes: (a OR b) NOT c~") == \
        "strings and branes\\: \\(a or b\\) not c\\~"


def test_walk_keys_name_every_setting() -> None:
    base = WalkConfig.from_settings(SearchSettings()).but(weighting="coverage")
    assert base.key() != base.but(tau=0.5).key() != base.but(age="query").key()
    assert base.but(hops="1.5").key() == base.key()
    assert base.key() != base.but(seed_weights="uniform").key() != base.but(fill="none").key()
    assert base.key() != base.but(query_seeds=5).key() != base.but(sub_queries=5).key()
    # The uniform walk ignores Delta, so Delta's settings do not split its runs.
    uniform = base.but(weighting="uniform")
    assert uniform.but(tau=0.5, beta=2.0, theta=0.9).key() == uniform.key()


def test_bootstrap_intervals() -> None:
    same = pooled_difference([1, 2, 3], [1, 2, 3], [4, 4, 4])
    assert same.value == 0 and not same.clear
    better = mean_difference([0.5] * 30, [0.1] * 30)
    assert better.value == pytest.approx(0.4) and better.clear and better.low > 0
    # Pooled: (6 - 3) / 12, not the mean of per-query differences.
    assert pooled_difference([2, 2, 2], [1, 1, 1], [2, 4, 6]).value == pytest.approx(0.25)
