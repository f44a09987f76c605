"""Hit@5 of the idea-to-prior-work workflow on a query set with relevance labels.

    .venv/bin/python -m crase.bench.idea_eval --queries ../shared/data/csfcube/queries.jsonl
    .venv/bin/python -m crase.bench.idea_eval --queries ... --load ../shared/data/csfcube
    .venv/bin/python -m crase.bench.idea_eval --queries ... --fused-order

Each query's text is the idea; its source paper is excluded (with its edges) from what the
run may use, as the data README asks. A query counts as a hit when any of its relevant
papers is among the five works returned (any corpus version of a returned work counts).
The corpus must be in the configured database (`--load DIR` loads it first with the
ingest loader; loading is idempotent). Runs use whatever backends the settings give
(offline without model endpoints) in retrieval_eval mode; providers are off unless
`--providers`, since the query set's relevant papers are all in the corpus.

Besides Hit@5 it reports where the relevant papers were lost, per query, from the audit:
discovered (any route), selected for assessment, graded positive, shortlisted, returned.
Results go to `<var_dir>/bench/idea_eval-<time>.json`.
"""

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crase.errors import CorpusError, CraseError
from crase.graph import Graph
from crase.idea.pipeline import IdeaResult, run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.from_settings import build_idea_backends, describe_idea_backends
from crase.ingest.corpus import locate_corpus
from crase.ingest.loader import graph_totals, load_corpus
from crase.settings import Settings


@dataclass
class QueryOutcome:
    query_id: str
    run_id: str
    outcome: str
    hit: bool
    relevant: int
    returned_relevant: int
    first_relevant_rank: int | None
    discovered: int  # relevant papers that any route found
    selected: int
    graded_positive: int
    shortlisted: int
    seconds: float
    returned: list[str] = field(default_factory=list)


def read_queries(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise CorpusError(f"cannot read the queries {path}: {err}") from err
    return [json.loads(line) for line in lines if line.strip()]


def evaluate(query: dict[str, Any], result: IdeaResult, seconds: float) -> QueryOutcome:
    relevant = set(query["relevant_ids"])
    returned = [set(p.versions) for p in result.papers]
    ranks = [p.rank for p, ids in zip(result.papers, returned, strict=True) if ids & relevant]
    stages = {"discovered": 0, "selected": 0, "graded_positive": 0, "shortlisted": 0}
    for candidate in result.audit["candidates"]:
        ids = {version["id"] for version in candidate["versions"] if version["id"]}
        if not ids & relevant:
            continue
        stages["discovered"] += 1
        selection, assessment = candidate["selection"], candidate["assessment"]
        stages["selected"] += int(bool(selection and selection["kept"]))
        stages["graded_positive"] += int(bool(assessment and (assessment["score"] or 0) >= 1))
        stages["shortlisted"] += int(bool(candidate["shortlist"] and
                                          candidate["shortlist"]["kept"]))
    return QueryOutcome(
        query_id=query["query_id"], run_id=result.run_id, outcome=result.outcome,
        hit=bool(ranks), relevant=len(relevant), returned_relevant=len(ranks),
        first_relevant_rank=min(ranks) if ranks else None, seconds=round(seconds, 2),
        returned=[p.paper_id for p in result.papers], **stages)


def summarise(outcomes: list[QueryOutcome], backends: str, queries_path: Path
              ) -> dict[str, Any]:
    n = len(outcomes)
    hits = sum(o.hit for o in outcomes)

    def share(name: str) -> float:
        return round(sum(bool(getattr(o, name)) for o in outcomes) / n, 4) if n else 0.0

    return {
        "queries_file": str(queries_path), "queries": n, "backends": backends,
        "hit_at_5": round(hits / n, 4) if n else 0.0, "hits": hits,
        "mean_relevant_in_top5": round(sum(o.returned_relevant for o in outcomes) / n, 3)
        if n else 0.0,
        "queries_with_relevant_discovered": share("discovered"),
        "queries_with_relevant_selected": share("selected"),
        "queries_with_relevant_graded_positive": share("graded_positive"),
        "queries_with_relevant_shortlisted": share("shortlisted"),
        "ranking_failures": sum(o.outcome == "ranking_failed" for o in outcomes),
        "mean_seconds": round(sum(o.seconds for o in outcomes) / n, 2) if n else 0.0,
        "per_query": [asdict(o) for o in outcomes],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.idea_eval",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=Path, required=True, help="queries.jsonl")
    parser.add_argument("--load", type=Path, help="load this corpus folder first")
    parser.add_argument("--limit", type=int, help="only the first N queries")
    parser.add_argument("--providers", action="store_true", help="probe external providers")
    parser.add_argument("--out", type=Path, help="where to write the JSON summary")
    parser.add_argument("--fused-order", action="store_true",
                        help="the offline expert without its learned final order: the "
                             "fused score alone (to compare the two with idea_compare)")
    args = parser.parse_args(argv)
    settings = Settings()
    graph = Graph.connect(settings.database)
    try:
        return run_benchmark(graph, settings, args)
    except CraseError as err:
        print(f"idea_eval: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    finally:
        graph.close()


def run_benchmark(graph: Graph, settings: Settings, args: argparse.Namespace) -> int:
    if args.load:
        report = load_corpus(graph, locate_corpus(args.load), settings, show_progress=False)
        print(f"corpus {report.corpus}: {report.status}, graph {report.graph_after}",
              file=sys.stderr)
    totals = graph_totals(graph)
    if totals["papers"] == 0:
        raise CorpusError("the database holds no papers: pass --load <corpus folder>")
    queries = read_queries(args.queries)[: args.limit]
    backends = build_idea_backends(settings, final_order=not args.fused_order)
    described = describe_idea_backends(backends)
    print(f"{len(queries)} queries on {totals['papers']} papers, {totals['citations']} "
          f"citations; {described}", file=sys.stderr)
    outcomes = []
    for number, query in enumerate(queries, start=1):
        request = IdeaRequest(idea=query["query"], exclude=[query["source_paper_id"]],
                              providers=args.providers, params=settings.idea)
        started = time.monotonic()
        result = run_idea(graph, backends, request)
        outcome = evaluate(query, result, time.monotonic() - started)
        outcomes.append(outcome)
        hits = sum(o.hit for o in outcomes)
        print(f"{number:>3}/{len(queries)} {query['query_id']:<28} hit={int(outcome.hit)} "
              f"first={outcome.first_relevant_rank or '-'} found={outcome.discovered}/"
              f"{outcome.relevant} shortlisted={outcome.shortlisted} "
              f"{outcome.seconds:.1f}s  running Hit@5 {hits}/{number}", file=sys.stderr)
    summary = summarise(outcomes, described, args.queries)
    summary["names"] = backends.names()
    summary["settings"] = settings.idea.model_dump(mode="json")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or settings.var_dir / "bench" / f"idea_eval-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"Hit@5 = {summary['hits']}/{summary['queries']} = {summary['hit_at_5']:.3f} "
          f"({described}); details in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
