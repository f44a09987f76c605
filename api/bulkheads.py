"""Bulkheads: a bounded number of requests of each heavy kind of work in the server at once,
so that no one kind can take the threads, the interpreter and the database from the rest.

Every kind has its own limit (the `api.*_max_in_flight` settings): the text tools
(code extraction, training-data conversion), the papers a search is asked to start from
(each title one full-text query), the citation-gap analysis, the literature maps and
search submissions. The analyst's Cypher has its own slots (api/analyst.py
`AnalystSlots`). A request past its kind's limit is not queued: it is answered at once,
429 `WorkBusy` with Retry-After, so the queue of one kind never starves GET /health and
the light reads, whose own work stays small. Measured by `python -m crase.bench.bulkheads`
(docs/http-api.md).
"""

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from crase.errors import WorkBusy
from crase.settings import ApiSettings

# Kind of work -> the ApiSettings field that bounds it.
KIND_SETTINGS = {
    "text_tools": "text_tools_max_in_flight",
    "given_papers": "given_papers_max_in_flight",
    "citation_gaps": "citation_gaps_max_in_flight",
    "literature": "literature_max_in_flight",
    "searches": "search_submissions_max_in_flight",
}


@dataclass
class Bulkhead:
    kind: str
    setting: str
    size: int
    retry_after_s: int
    _free: threading.BoundedSemaphore = field(init=False, repr=False)
    in_flight: int = 0

    def __post_init__(self) -> None:
        self._free = threading.BoundedSemaphore(self.size)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the kind's slots for the block, or WorkBusy at once."""
        if not self._free.acquire(blocking=False):
            raise WorkBusy(f"{self.size} of {self.size} requests of this kind "
                           f"({self.kind.replace('_', ' ')}) are in progress "
                           f"(api.{self.setting}); retry in {self.retry_after_s} s",
                           self.retry_after_s)
        self.in_flight += 1
        try:
            yield
        finally:
            self.in_flight -= 1
            self._free.release()


class Bulkheads:
    """One Bulkhead per kind of heavy work, sized from the settings."""

    def __init__(self, api: ApiSettings) -> None:
        self.kinds = {kind: Bulkhead(kind, setting, getattr(api, setting),
                                     api.busy_retry_after_s)
                      for kind, setting in KIND_SETTINGS.items()}

    def slot(self, kind: str) -> AbstractContextManager[None]:
        return self.kinds[kind].slot()
