"""bench/bulkheads.py: each kind's heavy request is one the route takes (a body the route's
model refuses would measure the validation, not the work), and as heavy as it says."""

import random

import pytest

from crase.api.routes.analyst import AnalystQuery
from crase.api.routes.research_tools import CodeExtractBody
from crase.api.routes.searches import SearchBody
from crase.bench.bulkheads import KINDS, heavy_request
from crase.bibtex import read_bibtex
from crase.research.citation_gaps import GapRequest

MODELS = {"/code-extract": CodeExtractBody, "/searches": SearchBody,
          "/analyst/cypher": AnalystQuery, "/citation-gaps": GapRequest}


@pytest.mark.parametrize("kind", KINDS)
def test_each_heavy_request_is_valid_for_its_route(kind: str) -> None:
    method, path, body = heavy_request(kind, random.Random(0))
    assert method == "POST"
    MODELS[path].model_validate(body)


def test_the_heavy_requests_are_as_heavy_as_documented() -> None:
    rng = random.Random(0)
    assert heavy_request("code-extract", rng)[2]["text"].count("\nfrom ") == 990
    assert len(heavy_request("search-from-papers", rng)[2]["given_papers"]) == 20
    assert len(read_bibtex(heavy_request("citation-gaps", rng)[2]["bibtex"])) == 500
    with pytest.raises(SystemExit, match="no kind"):
        heavy_request("nothing", rng)
