"""What model work cost, in one type: `Usage` counts one call, a role's calls, a stage or
a whole run the same way, so sums and differences are plain arithmetic.

A *call* is one prompt with its inputs, however many HTTP requests it took (retries and
the one repair request included). A call is *made* when it reached the backend (a cached
reply or a skipped call is not made). Offline backends count calls and leave tokens 0.

`ModelLedger` keeps a run's Usage per stage and per (stage, model, prompt version), plus
the failed calls, and serialises them for the Run node and the audit.
"""

import json
import threading
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

COUNTERS = ("calls", "made", "cached", "repaired", "failed", "requests", "retries",
            "prompt_tokens", "completion_tokens", "usage_missing", "cost_usd", "seconds")


@dataclass
class Usage:
    calls: int = 0  # logical calls
    made: int = 0  # calls that reached the backend (not served from the cache, not skipped)
    cached: int = 0
    repaired: int = 0  # valid only after the one repair request
    failed: int = 0
    requests: int = 0  # HTTP requests, retries included
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_missing: int = 0  # replies without a usage field: unknown, not zero
    cost_usd: float = 0.0
    seconds: float = 0.0
    models: set[str] = field(default_factory=set)

    def add(self, other: "Usage") -> None:
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.models |= other.models

    def since(self, earlier: "Usage") -> "Usage":
        """What was spent after `earlier`, a copy of this Usage taken before."""
        spent = Usage(models=set(self.models))
        for name in COUNTERS:
            setattr(spent, name, getattr(self, name) - getattr(earlier, name))
        return spent

    def copy(self) -> "Usage":
        return replace(self, models=set(self.models))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["models"] = sorted(self.models)
        data["cost_usd"] = round(self.cost_usd, 6)
        data["seconds"] = round(self.seconds, 4)
        return data


assert {f.name for f in fields(Usage)} == {*COUNTERS, "models"}


class ModelLedger:
    """Model spending of one run, per stage and per (stage, model, prompt version), and the
    failed calls (at most `max_failures_kept` in full); thread-safe."""

    def __init__(self, max_failures_kept: int = 500) -> None:
        self._lock = threading.Lock()
        self._stages: dict[str, Usage] = {}
        self._models: dict[tuple[str, str, str], Usage] = {}
        self._failures: list[dict[str, Any]] = []
        self._failures_dropped = 0
        self._max_failures = max_failures_kept

    def record(self, stage: str, model: str, prompt: str, usage: Usage,
               failure: dict[str, Any] | None = None) -> None:
        with self._lock:
            self._stages.setdefault(stage, Usage()).add(usage)
            self._models.setdefault((stage, model, prompt), Usage()).add(usage)
            if failure is not None:
                if len(self._failures) < self._max_failures:
                    self._failures.append(failure)
                else:
                    self._failures_dropped += 1

    def stage(self, name: str) -> Usage:
        with self._lock:
            return self._stages.get(name, Usage()).copy()

    def totals(self) -> Usage:
        total = Usage()
        with self._lock:
            for usage in self._stages.values():
                total.add(usage)
        return total

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-serialisable: totals, per stage, per model and prompt, failures."""
        totals = self.totals().to_dict()
        with self._lock:
            return {
                "totals": totals,
                "stages": {name: u.to_dict() for name, u in sorted(self._stages.items())},
                "models": [
                    {"stage": stage, "model": model, "prompt": prompt, **u.to_dict()}
                    for (stage, model, prompt), u in sorted(self._models.items())
                ],
                "failures": list(self._failures),
                "failures_dropped": self._failures_dropped,
            }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def to_properties(self) -> dict[str, int | float | str | list[str]]:
        """Flat values a Neo4j node can hold (no nested maps); the full ledger as JSON."""
        totals = self.totals()
        with self._lock:
            keys = sorted(self._models)
        return {
            "model_calls": totals.calls,
            "model_calls_cached": totals.cached,
            "model_calls_repaired": totals.repaired,
            "model_calls_failed": totals.failed,
            "model_requests": totals.requests,
            "model_prompt_tokens": totals.prompt_tokens,
            "model_completion_tokens": totals.completion_tokens,
            "model_usage_missing": totals.usage_missing,
            "model_cost_usd": round(totals.cost_usd, 6),
            "model_names": sorted({model for _, model, _ in keys}),
            "prompt_versions": sorted({prompt for _, _, prompt in keys}),
            "model_ledger": self.to_json(),
        }
