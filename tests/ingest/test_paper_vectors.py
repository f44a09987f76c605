"""`crase embed` and the embedding of `crase db import` (embed_papers): every paper gets a
vector with its encoder's name, a rerun stores nothing and encodes nothing, and vectors of
another encoder are replaced."""

from pathlib import Path

import pytest

from crase.graph import Graph
from crase.ingest.paper_vectors import embed_papers, vector_cache_dir
from crase.models.minilm import NumpyBertEncoder
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration


def stored_models(graph: Graph) -> dict[str | None, int]:
    with graph.driver.session(database=graph.database) as session:
        rows = session.run("MATCH (p:Paper) RETURN p.embedding_model AS model, "
                           "count(*) AS papers").data()
    return {row["model"]: row["papers"] for row in rows}


def test_every_paper_gets_a_vector_of_the_encoder_once(graph: Graph, tmp_path: Path) -> None:
    load_sample_slice(graph, 20)
    encoder = NumpyBertEncoder()
    stages: set[str] = set()
    first = embed_papers(graph, encoder, tmp_path, lambda stage, done, total: stages.add(stage))
    assert (first.papers, first.stored) == (20, 20)
    assert stages == {"embedding papers", "storing vectors"}
    assert stored_models(graph) == {encoder.name: 20}
    cached = list(vector_cache_dir(tmp_path).glob(f"{encoder.name}-*/vectors.npy"))
    assert len(cached) == 1

    again = embed_papers(graph, encoder, tmp_path)
    assert (again.papers, again.stored) == (20, 0)

    class Renamed(NumpyBertEncoder):
        name = "another-encoder"

    replaced = embed_papers(graph, Renamed(), tmp_path)
    assert replaced.stored == 20
    assert stored_models(graph) == {"another-encoder": 20}
