"""/health answers within a second while the server reads user text built to stall it: a
regex call on such text held the interpreter, and with it every route, for seconds."""

import threading
import time
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.api.conftest import client  # noqa: F401  (fixture)
from tests.research.test_code_extractor_stalls import STALLS

pytestmark = pytest.mark.integration

HEALTH_BUDGET_S = 1.0


def slowest_health_while(client: TestClient, route: str,  # noqa: F811
                         body: dict[str, Any]) -> tuple[int, float]:
    """The POST's status and the slowest /health answered while it ran."""
    answer: list[int] = []
    busy = threading.Thread(target=lambda: answer.append(client.post(route, json=body)
                                                         .status_code))
    busy.start()
    slowest = 0.0
    while busy.is_alive():
        started = time.monotonic()
        assert client.get("/health").status_code == 200
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.05)
    busy.join()
    return answer[0], slowest


@pytest.mark.parametrize("text", [STALLS["fence then spaces"],
                                  STALLS["from-imports without import"]],
                         ids=["fence then spaces", "from-imports"])
def test_health_stays_fast_while_a_hostile_document_is_read(
        client: TestClient, text: str) -> None:  # noqa: F811
    # Unmeasured first calls: the first request of an app and of a route set things up.
    assert client.get("/health").status_code == 200
    assert client.post("/code-extract", json={"filename": "w.md", "text": "x = 1",
                                              "use_model": False}).status_code == 200
    status, slowest = slowest_health_while(client, "/code-extract", {
        "filename": "attack.md", "text": text, "use_model": False})
    assert status == 200
    assert slowest < HEALTH_BUDGET_S, f"/health took {slowest:.2f} s"
