"""The external calls of one search, stage by stage: how many were planned before the
stage began, how many were made, how many HTTP tries they took, and the seconds spent
waiting (for the rate limiter's next slot, and in retry back-off).

A stage's plan is known before its first call, as the paper's 1 + |V| + |E| is for model
calls: one search per sub-query; one page per 1,000 references or citations of each seed
that is not cached (the counts come with the search hits); one batch per 500 neighbours
whose reference list is not cached. A stage that made fewer calls than planned stopped
early (a failure, recorded with it); one that made more met longer lists than the counts
announced.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


class CallMeter(Protocol):
    """What a client counts (SemanticScholarClient, OpenAlexClient); read only."""

    @property
    def calls(self) -> int: ...

    @property
    def requests_sent(self) -> int: ...

    @property
    def retry_wait_s(self) -> float: ...

    @property
    def rate_limit_wait_s(self) -> float: ...


@dataclass
class StageCalls:
    planned: int = 0
    made: int = 0
    tries: int = 0  # HTTP requests sent, retries included
    rate_limit_wait_s: float = 0.0
    retry_wait_s: float = 0.0
    seconds: float = 0.0  # wall time of the stage's calls, waits included


@dataclass
class CallBudget:
    """Per stage name, in the order the stages ran."""

    requests_per_second: float
    stages: dict[str, StageCalls] = field(default_factory=dict)

    def plan(self, stage: str, calls: int) -> StageCalls:
        entry = self.stages.setdefault(stage, StageCalls())
        entry.planned += calls
        return entry

    def estimate_s(self, calls: int) -> float:
        """Seconds `calls` take at the rate limit alone (no retries)."""
        return calls / self.requests_per_second

    @contextmanager
    def metered(self, stage: str, meter: CallMeter, clock: Any) -> Iterator[StageCalls]:
        """Adds what `meter` counts while the block runs to `stage`."""
        entry = self.stages.setdefault(stage, StageCalls())
        before = (meter.calls, meter.requests_sent, meter.rate_limit_wait_s,
                  meter.retry_wait_s, clock())
        try:
            yield entry
        finally:
            entry.made += meter.calls - before[0]
            entry.tries += meter.requests_sent - before[1]
            entry.rate_limit_wait_s += meter.rate_limit_wait_s - before[2]
            entry.retry_wait_s += meter.retry_wait_s - before[3]
            entry.seconds += clock() - before[4]

    def totals(self) -> StageCalls:
        total = StageCalls()
        for entry in self.stages.values():
            for name, value in asdict(entry).items():
                setattr(total, name, getattr(total, name) + value)
        return total

    def to_dict(self) -> dict[str, Any]:
        rounded = {name: rounded_calls(entry) for name, entry in self.stages.items()}
        return {"requests_per_second": self.requests_per_second, "stages": rounded,
                "total": rounded_calls(self.totals())}


def rounded_calls(entry: StageCalls) -> dict[str, Any]:
    return {name: round(value, 3) if isinstance(value, float) else value
            for name, value in asdict(entry).items()}
