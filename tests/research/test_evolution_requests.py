"""Bad evolution requests are named errors, and the refused map is a failed Run (over a small
slice of the sample; the maps of the whole sample are in test_evolution.py)."""

import pytest
from pydantic import ValidationError

from crase.errors import PaperNotFound
from crase.graph import Graph
from crase.research.evolution import EvolutionRequest, map_evolution
from tests.sample_slice import SAMPLE, load_sample_slice

pytestmark = pytest.mark.integration


def test_bad_requests_are_named_errors(graph: Graph) -> None:
    load_sample_slice(graph, 20)
    with pytest.raises(ValidationError, match="either topic or seed_paper"):
        EvolutionRequest()
    with pytest.raises(ValidationError, match="either topic or seed_paper"):
        EvolutionRequest(topic="x", seed_paper="y")
    with pytest.raises(PaperNotFound, match="give the id of a loaded paper"):
        map_evolution(graph, None, EvolutionRequest(seed_paper="no-such-paper"))
    with graph.driver.session() as session:
        status = session.run("MATCH (r:Run {kind: 'evolution'}) RETURN r.status AS s"
                             ).single()
    assert status is not None and status["s"] == "failed"
    assert SAMPLE.is_dir()
