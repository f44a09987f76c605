"""`crase score --engine ray` on a real local Ray cluster (a head without CPUs and two worker
nodes of one CPU each, from Ray's own test utility) against the session's real Neo4j: the
same stored scores as the single-process path, resumable, both workers busy, and a worker
that dies losing only its batch."""

import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.errors import RayUnavailable
from crase.graph import Graph
from crase.scoring.claims import Claim, PaperText
from crase.search.ray_scoring import import_ray, score_corpus_on_ray
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.protocols import SearchBackends
from crase.search.scoring_worker import find_unscored_edges, score_corpus, scoring_backends
from crase.settings import Settings
from crase.usage import Usage
from tests.conftest import clean_graph
from tests.sample_slice import load_sample_slice

PAPERS = 200  # the first 200 sample papers: 227 citations among them
BATCH = 40
FEW_PAPERS = 150  # 121 citations: four batches
CACHE = 20_000
MB = 1024 * 1024


def test_missing_ray_is_a_named_one_line_error() -> None:
    with pytest.raises(RayUnavailable) as caught:
        import_ray("ray_not_installed_here")
    message = str(caught.value)
    assert "\n" not in message
    assert 'pip install "ray==2.60.0"' in message and "--engine local" in message


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    ray = pytest.importorskip("ray", reason="the ray extra: pip install -e '.[ray]'")
    from ray.cluster_utils import Cluster

    # The crashing factory below lives in this module, which workers cannot import.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "object_store_memory": 100 * MB, "include_dashboard": False})
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=1, object_store_memory=100 * MB)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()


@pytest.mark.integration
@pytest.mark.slow
def test_ray_scores_like_one_process_resumes_and_uses_both_workers(
        graph: Graph, settings: Settings, ray_cluster: str) -> None:
    factory = numpy_backends
    theta = settings.search.theta

    load_sample_slice(graph, PAPERS)
    local = score_corpus(graph, factory(settings), theta, BATCH)
    expected = stored_scores(graph)
    expected_claims = stored_claims(graph)
    assert local.edges_scored == len(expected) > 5 * BATCH
    clean_graph(graph)

    load_sample_slice(graph, PAPERS)
    first = score_corpus_on_ray(settings, factory, BATCH, limit=2 * BATCH, workers=2,
                                address=ray_cluster)
    assert (first.edges_found, first.edges_scored, first.batches_failed) == (
        2 * BATCH, 2 * BATCH, 0)
    scored_first = stored_scores(graph)
    assert len(scored_first) == 2 * BATCH

    heard: list[tuple[str, int, int]] = []
    rest = score_corpus_on_ray(settings, factory, BATCH, workers=2, address=ray_cluster,
                               progress=lambda *args: heard.append(args))
    # The rerun found only what the first left, and rewrote nothing the first had written.
    assert rest.edges_found == rest.edges_scored == len(expected) - 2 * BATCH
    after = stored_scores(graph)
    assert all(after[edge]["scored_at"] == row["scored_at"]
               for edge, row in scored_first.items())
    assert heard[-1] == ("scoring edges", rest.edges_found, rest.edges_found)

    nodes = {worker.split(" pid ")[0] for worker in rest.batches_by_worker}
    assert len(nodes) == 2 and all(n > 0 for n in rest.batches_by_worker.values())

    assert after.keys() == expected.keys()
    for edge, row in after.items():
        assert same_score(row, expected[edge]), edge
    assert stored_claims(graph) == expected_claims  # each paper's claims once, the same


@pytest.mark.integration
@pytest.mark.slow
def test_a_worker_that_dies_loses_only_its_batch(
        graph: Graph, settings: Settings, ray_cluster: str, tmp_path: Path, cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    load_sample_slice(graph, FEW_PAPERS)
    total = len(find_unscored_edges(graph, scoring_backends(settings, CACHE).scorer))
    dying = functools.partial(backends_dying_once, marker=str(tmp_path / "died"))

    report = score_corpus_on_ray(settings, dying, BATCH, workers=2, address=ray_cluster)
    assert report.batches_failed == 1 and report.edges_in_failed_batches == BATCH
    assert report.edges_scored == total - BATCH
    assert len(report.batches_by_worker) == 1  # the survivor did every other batch
    assert "run `crase score` again" in report.summary()

    # The lost batch is what a rerun scores, here through the command line.
    code = main(["score", "--engine", "ray", "--ray-address", ray_cluster, "--workers", "2",
                 "--batch-size", str(BATCH), "--cache-size", str(CACHE)])
    assert code == 0
    summary = f"scored {BATCH} of {BATCH} unscored edges"
    assert any(line.startswith(summary) for line in capsys.readouterr().out.splitlines())
    assert len(stored_scores(graph)) == total


@pytest.mark.integration
def test_more_workers_than_the_cluster_has_cpus_are_refused(
        graph: Graph, settings: Settings, ray_cluster: str) -> None:
    factory = functools.partial(scoring_backends, cache_size=CACHE)
    with pytest.raises(RayUnavailable, match="has 2 CPUs for 3 workers"):
        score_corpus_on_ray(settings, factory, BATCH, workers=3, address=ray_cluster)


def test_ray_flags_need_the_ray_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--workers", "2"]) == 2
    assert capsys.readouterr().err.startswith(
        "crase: InvalidRequest: --workers and --ray-address apply to the Ray engine")


@pytest.mark.integration
@pytest.mark.slow
def test_ray_workers_score_with_the_classifier_the_settings_name(
        graph: Graph, settings: Settings, ray_cluster: str) -> None:
    classifier = settings.model_copy(update={"models": settings.models.model_copy(
        update={"entailment_scorer": "classifier"})})
    load_sample_slice(graph, FEW_PAPERS)
    factory = functools.partial(scoring_backends, cache_size=CACHE)
    report = score_corpus_on_ray(classifier, factory, BATCH, workers=2, address=ray_cluster)
    scored = stored_scores(graph)
    assert report.batches_failed == 0 and report.edges_scored == len(scored) > BATCH
    version = factory(classifier).scorer.version
    assert {(row["scorer"], row["version"]) for row in scored.values()} == {
        ("offline-claim-pair-classifier", version)}
    assert all(row["rows"] * row["cols"] == len(row["matrix"]) for row in scored.values())


def numpy_backends(settings: Settings) -> SearchBackends:
    """The backends of `crase score` with the float32 numpy claim encoder: a claim's vector
    does not depend on the batch it is encoded in (the int8 encoder quantizes activations
    per batch), so both paths can agree."""
    numpy_models = settings.models.model_copy(update={"paper_encoder": "numpy"})
    backends = scoring_backends(settings.model_copy(update={"models": numpy_models}), CACHE)
    assert backends.encoder is not None
    backends.scorer = CosineEntailmentScorer(backends.encoder)
    return backends


class ExtractorDyingOnce:
    """The offline extractor, except that the first call of the whole cluster ends its
    worker process (the marker file says it happened)."""

    def __init__(self, inner: Any, marker: str) -> None:
        self.inner, self.marker = inner, marker
        self.name: str = inner.name
        self.usage: Usage = inner.usage

    def extract(self, papers: list[PaperText]) -> dict[str, list[Claim]]:
        try:
            open(self.marker, "x").close()
        except FileExistsError:
            return dict(self.inner.extract(papers))
        os._exit(1)


def backends_dying_once(settings: Settings, marker: str) -> SearchBackends:
    backends = scoring_backends(settings, CACHE)
    backends.extractor = ExtractorDyingOnce(backends.extractor, marker)
    return backends


def stored_scores(graph: Graph) -> dict[tuple[str, str], dict[str, Any]]:
    with graph.driver.session(database=graph.database) as session:
        rows = session.run(
            "MATCH (u:Paper)-[r:CITES]->(v:Paper) WHERE r.scorer IS NOT NULL "
            "RETURN u.id AS citing, v.id AS cited, r.delta AS delta, r.matrix AS matrix, "
            "r.matrix_rows AS rows, r.matrix_cols AS cols, r.scorer AS scorer, "
            "r.scorer_version AS version, r.theta AS theta, r.scored_at AS scored_at").data()
    return {(row.pop("citing"), row.pop("cited")): row for row in rows}


def same_score(row: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Delta, scorer and shape exactly; the matrix to one unit of its stored sixth decimal:
    a claim's float32 embedding depends on the BLAS threads and on the batch it was encoded
    in, so a cosine near a rounding boundary may be stored 0.000001 apart."""
    keys = ("delta", "rows", "cols", "scorer", "version", "theta")
    return (all(row[key] == expected[key] for key in keys)
            and len(row["matrix"]) == len(expected["matrix"])
            and all(abs(a - b) <= 1.5e-6 for a, b in zip(row["matrix"], expected["matrix"],
                                                         strict=True)))


def stored_claims(graph: Graph) -> dict[str, list[tuple[int, str]]]:
    with graph.driver.session(database=graph.database) as session:
        rows = session.run(
            "MATCH (p:Paper)-[h:HAS_CLAIM]->(c:Claim) WITH p, h, c ORDER BY h.rank "
            "RETURN p.id AS id, collect([h.rank, c.text]) AS claims").data()
    return {row["id"]: [(rank, text) for rank, text in row["claims"]] for row in rows}
