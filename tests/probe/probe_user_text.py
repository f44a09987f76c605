"""The probe's group `stalls` (issue 45's user text that stalled every route), against a
`crase serve` of the probe on its sample database: each request is sent in a thread of its
own while /health is asked every 0.1 s, and holds when it is answered (below 500) within
ANSWER_BUDGET_S and no /health meanwhile took HEALTH_BUDGET_S or more.

- POST /citation-gaps with a 20,000-character draft: one word; a long word before many short
  sentences (the word before each period was searched for over the whole text before it);
  TeX math openings without their close; a run of spaces before a letter;
- POST /code-extract: a fence line of ``` and 20,000 spaces; 990 lines `from aaa...);`;
  990 lines `a()`, spaces and `x` (92.7 s past a 5 s CPU deadline checked every 1,000 lines);
- POST /analyst/cypher: a query of string literals of escapes without their close;
- POST /papers/batch: an author name of 5,000 linking "and"s.

Each function records into the probe's Case (`case`: tests/probe/probe.py holds the class); the
measured figures go in its notes.
"""

import threading
import time
from typing import Any

import httpx

from crase.bench.api_load import API_KEY

ANSWER_BUDGET_S = 30.0  # the slowest answer to an attack
HEALTH_BUDGET_S = 1.0  # the slowest /health while one is read
DRAFT_CHARS = 20_000  # the longest draft POST /citation-gaps takes
LINES = 990

CITATION_GAP_DRAFTS: dict[str, str] = {
    "draft: one 20,000-character word": "a" * (DRAFT_CHARS - 1) + ".",
    "draft: a 6,000-character word, 3,499 sentences": "a" * 6_000 + "1" + ". Xy" * 3_499,
    "draft: 5,000 TeX \\[ without \\]": "\\[ x" * (DRAFT_CHARS // 4),
    "draft: 19,999 spaces then a letter": " " * (DRAFT_CHARS - 1) + "x",
}
CODE_DOCUMENTS: dict[str, str] = {
    "code: ``` and 20,000 spaces": "```" + " " * DRAFT_CHARS + "!\nx = 1\n",
    f"code: {LINES} lines from aaa...);": "import os\n" + "\n".join(
        "from " + "a" * 1_900 + ");" for _ in range(LINES)),
    f"code: {LINES} lines a() + spaces + x": "import os\n" + "\n".join(
        "a()" + " " * 1_900 + "x" for _ in range(LINES)),
}


OTHER_ATTACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "analyst: 9,990 unclosed string escapes": (
        "/analyst/cypher", {"query": '"\\' * 9_990, "params": {}}),
    "batch: an author of 5,000 linking ands": (
        "/papers/batch", {"papers": [{"id": "probe-and", "title": "And",
                                      "authors": ["A. Smith " + "and " * 5_000 + "B. Jones"]}]}),
}


def attacks() -> dict[str, tuple[str, dict[str, Any]]]:
    """Each attack: (route, JSON body), by what it is; a new one is a row in one of the
    tables above."""
    out: dict[str, tuple[str, dict[str, Any]]] = {
        what: ("/citation-gaps", {"draft": draft}) for what, draft in CITATION_GAP_DRAFTS.items()}
    out.update({what: ("/code-extract", {"filename": "attack.md", "text": text,
                                         "use_model": False})
                for what, text in CODE_DOCUMENTS.items()})
    return out | OTHER_ATTACKS


def probe_stalls(case: Any, url: str) -> None:
    """Every attack answered within ANSWER_BUDGET_S, /health under HEALTH_BUDGET_S meanwhile."""
    # Unmeasured first calls: the routes load their encoder once.
    for route, body in (("/code-extract", {"filename": "w.txt", "text": "x = 1",
                                           "use_model": False}),
                        ("/citation-gaps", {"draft": "Tachyon condensation on D-branes."})):
        timed_post(url, route, body)
    for what, (route, body) in attacks().items():
        status, took, slowest_health = attack(url, route, body)
        case.check(status < 500 and took < ANSWER_BUDGET_S,
                   f"{what}: {status} in {took:.1f} s")
        case.check(slowest_health < HEALTH_BUDGET_S,
                   f"{what}: /health took {slowest_health:.2f} s meanwhile")
        case.notes.append(f"{what}: {status} in {took:.2f} s, slowest /health "
                          f"{slowest_health:.3f} s")


def attack(url: str, route: str, body: dict[str, Any]) -> tuple[int, float, float]:
    """(status, seconds, slowest /health meanwhile) of one POST; status 0 when it failed."""
    answer: list[tuple[int, float]] = []
    busy = threading.Thread(target=lambda: answer.append(timed_post(url, route, body)))
    busy.start()
    slowest = health_while(url, busy)
    busy.join()
    status, took = answer[0] if answer else (0, float("inf"))
    return status, took, slowest


def timed_post(url: str, route: str, body: dict[str, Any]) -> tuple[int, float]:
    started = time.monotonic()
    try:
        response = httpx.post(f"{url}{route}", json=body, headers={"X-API-Key": API_KEY},
                              timeout=2 * ANSWER_BUDGET_S)
    except httpx.HTTPError:
        return 0, time.monotonic() - started
    return response.status_code, time.monotonic() - started


def health_while(url: str, busy: threading.Thread) -> float:
    """The slowest /health answer while `busy` runs."""
    slowest = 0.0
    while busy.is_alive():
        started = time.monotonic()
        try:
            httpx.get(f"{url}/health", timeout=2 * ANSWER_BUDGET_S)
        except httpx.HTTPError:
            return float("inf")
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.1)
    return slowest
