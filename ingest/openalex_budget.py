"""OpenAlex's daily budget in the API's own units: US dollars by call kind, as its
pricing page states them (singletons free, list and filter calls $0.10 per 1,000,
searches $1 per 1,000), counted per UTC day in a ledger file under var_dir, so that every
command of the day (grows, searches) draws on the one allowance.

A call is charged before it is sent, each try counted (a retried call may be billed
again), so the ledger is never below what the API could have billed and the budget is
never passed: a call that would pass it is refused (ProviderBudgetSpent) and not sent.
"""

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from crase.errors import ProviderBudgetSpent

CallKind = Literal["singleton", "list", "search"]
PRICE_USD: dict[CallKind, float] = {"singleton": 0.0, "list": 0.10 / 1000,
                                    "search": 1.0 / 1000}
BUDGET_SETTING = "CRASE_PROVIDERS__OPENALEX_DAILY_BUDGET_USD"


def today_utc() -> str:
    return datetime.now(UTC).date().isoformat()


@dataclass
class DailyBudget:
    """The day's spend, read from and written to `folder/<day>.json` after every charge."""

    limit_usd: float
    folder: Path
    day: Callable[[], str] = today_utc

    def spent_usd(self) -> float:
        path = self.folder / f"{self.day()}.json"
        try:
            return float(json.loads(path.read_text(encoding="utf-8"))["usd"])
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            return 0.0

    def left_usd(self) -> float:
        return max(0.0, self.limit_usd - self.spent_usd())

    def charge(self, kind: CallKind) -> float:
        """Books one try of `kind`; ProviderBudgetSpent, nothing booked, when it would pass
        the limit. Returns the price booked."""
        price = PRICE_USD[kind]
        if not price:
            return 0.0
        spent = self.spent_usd()
        # A tolerance of a millionth of a cent: 10,000 list calls make exactly $1.00.
        if spent + price > self.limit_usd + 1e-9:
            raise ProviderBudgetSpent(
                f"OpenAlex's daily budget is spent (${spent:.4f} of ${self.limit_usd:.4f} "
                f"today, UTC; a {kind} call costs ${price:.4f}); what came so far is kept: "
                f"run the same command again tomorrow, or raise {BUDGET_SETTING}")
        self.write(spent + price)
        return price

    def write(self, usd: float) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.day()}.json"
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps({"usd": round(usd, 9)}), encoding="utf-8")
        os.replace(partial, path)  # a reader never sees half a ledger
