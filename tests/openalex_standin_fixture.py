"""The OpenAlex stand-in over the committed sample, as a module-scoped fixture with the key
a test module chooses: `standin = standin_fixture(KEY)`."""

from collections.abc import Callable, Iterator

import pytest

from crase.bench.openalex_standin import OpenAlexStandIn
from tests.sample_slice import SAMPLE


def standin_fixture(key: str) -> Callable[[], Iterator[OpenAlexStandIn]]:
    @pytest.fixture(scope="module")
    def standin() -> Iterator[OpenAlexStandIn]:
        with OpenAlexStandIn(SAMPLE, api_key=key).running() as running:
            yield running

    return standin
