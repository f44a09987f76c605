"""The idea workflow's structuring prompts on the ideas of a query set, each asked once,
cold: facets, structural features, high-level facets and search queries, as `crase idea`
asks them (on the planner endpoint; a failed part falls back to the offline structurer),
and with `--parts recall` the papers the expert endpoint recalls for the idea (as many as
`recall_max_papers`).

    .venv/bin/python -m crase.bench.idea_structuring --queries Q.jsonl [--limit N]
        [--parts structuring recall]

Needs the planner role on a model (`crase models serve` prints the settings). Prints, per
prompt, calls, valid first time, repaired, failed, tokens and seconds per call, then each
failure with its reason. Nothing is cached: every call reaches the server.
"""

import argparse
import sys
import time
from pathlib import Path

from crase.bench.idea_eval import read_queries
from crase.bench.machine_state import load_average
from crase.idea.roles.model import ModelRecaller, ModelStructurer
from crase.models.chat import ModelRunner
from crase.settings import Settings
from crase.usage import ModelLedger


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.idea_structuring",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, required=True, help="queries.jsonl")
    parser.add_argument("--limit", type=int, help="only the first N queries")
    parser.add_argument("--parts", nargs="+", choices=("structuring", "recall"),
                        default=["structuring"], help="which prompts to ask (default: "
                        "structuring; recall asks the expert endpoint)")
    args = parser.parse_args(argv)
    settings = Settings()
    roles = {"structuring": "planner", "recall": "expert"}
    missing = [roles[part] for part in args.parts
               if not getattr(settings.models, roles[part]).configured]
    if missing:
        print(f"idea_structuring: no {' or '.join(missing)} model configured: start one with "
              "`crase models serve` and export the settings it prints", file=sys.stderr)
        return 2
    structurer = ModelStructurer(settings.models.planner) if "structuring" in args.parts \
        else None
    recaller = ModelRecaller(settings.models.expert) if "recall" in args.parts else None
    runner = ModelRunner(ModelLedger(), cache=None)
    failures = []
    started = time.monotonic()
    print(f"load before {load_average()}")
    for query in read_queries(args.queries)[: args.limit]:
        if structurer is not None:
            structure = structurer.structure(runner, query["query"], settings.idea)
            failures += [(query["query_id"], failure) for failure in structure.failures]
        if recaller is not None:
            recall = recaller.recall(runner, query["query"], settings.idea.recall_max_papers)
            failures += [(query["query_id"], recall.failure)] if recall.failure else []
    print_table(runner.ledger)
    print(f"{time.monotonic() - started:.0f} s in all; load after {load_average()}")
    for query_id, failure in failures:
        print(f"failed {failure['prompt']} on {query_id}: {failure['kind']}: "
              f"{failure['detail'][:200]}")
    return 0


def print_table(ledger: ModelLedger) -> None:
    print(f"{'prompt':<28} {'calls':>5} {'valid 1st':>9} {'repaired':>8} {'failed':>6} "
          f"{'prompt tok':>10} {'compl tok':>9} {'s/call':>7}")
    for row in ledger.to_dict()["models"]:
        first = row["calls"] - row["repaired"] - row["failed"]
        print(f"{row['prompt']:<28} {row['calls']:>5} {first:>9} {row['repaired']:>8} "
              f"{row['failed']:>6} {row['prompt_tokens']:>10} {row['completion_tokens']:>9} "
              f"{row['seconds'] / max(row['calls'], 1):>7.1f}")


if __name__ == "__main__":
    sys.exit(main())
