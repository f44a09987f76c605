"""How long recorded runs are kept: `crase runs prune`, and the marks that keep a run for good.

A finished Run is pruned (deleted with its links to papers; the papers stay) only when it is
past both rules of the `runs` settings: older than the newest `keep_runs` finished runs, and
started `keep_days` days ago or earlier. A run a user starred (`crase runs star`) or
exported (`crase export`, GET /runs/{id}/export) is never pruned, nor is a run still
queued or running. What a prune frees is counted as it goes: the runs, their links, and the
characters of the runs' own text properties (request summary, counts, timings, usage,
audit). Neo4j reuses the freed records for new data; the store files keep their size.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from crase.errors import RunNotFound
from crase.graph import Graph
from crase.run_lifecycle import FINISHED, now_iso
from crase.settings import RunSettings

DELETE_BATCH = 50  # runs per delete transaction: a search's run links hundreds of papers


@dataclass
class PruneReport:
    runs: int = 0
    links: int = 0
    chars: int = 0
    dry_run: bool = False

    def describe(self) -> str:
        verb = "would prune" if self.dry_run else "pruned"
        return (f"{verb} {self.runs:,} runs: {self.links:,} links to papers and "
                f"{self.chars:,} characters of run properties "
                f"({self.chars / 1e6:,.1f} MB as UTF-8 text at least)")


def prune_runs(graph: Graph, rules: RunSettings, now: datetime | None = None,
               dry_run: bool = False) -> PruneReport:
    """Delete the finished runs `rules` let go (see the module's docstring)."""
    before = (now or datetime.now(UTC)) - timedelta(days=rules.keep_days)
    rows = graph.read("read_prunable_runs", finished=sorted(FINISHED),
                      keep_runs=rules.keep_runs, before=before.isoformat())
    report = PruneReport(dry_run=dry_run)
    for start in range(0, len(rows), DELETE_BATCH):
        batch = rows[start:start + DELETE_BATCH]
        if not dry_run:
            graph.write("delete_runs", ids=[row["id"] for row in batch])
        report.runs += len(batch)
        report.links += sum(row["links"] for row in batch)
        report.chars += sum(row["chars"] for row in batch)
    return report


def star_run(graph: Graph, run_id: str, starred: bool = True) -> None:
    """Mark a run starred (never pruned) or take the mark away."""
    if not graph.write("set_run_starred", id=run_id, starred=starred):
        raise RunNotFound(f"no run with id {run_id!r}")


def mark_exported(graph: Graph, run_id: str) -> None:
    """Note that a run was exported: it is never pruned from now on."""
    graph.write("mark_run_exported", id=run_id, exported=now_iso())
