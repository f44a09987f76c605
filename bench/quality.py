"""The retrieval-quality benchmark behind `crase bench quality`.

For each query file (each on the Neo4j server holding its corpus):

1. Queries are read and resolved against the graph: the ground truth keeps only papers in
   the graph (the paper restricts queries and ground truth to its corpus the same way), a
   query left with none is dropped (counted), and the source paper's year is read from the
   graph (the Recency variant measures ages from it).
2. Every system of the main table runs on every query; ablations and the seed-corruption
   test run on the first `subset` queries (a fixed, documented subset). The learned
   order's feature-group ablations (`order_ablations`: a folder of model files, as
   `python -m crase.bench.learned_order evaluate --save-ablations` writes them) run on
   every query: their differences are small. Each (system setting, query) is one line of
   `<out>/runs/<dataset>/<key>.jsonl`, written as soon as it finishes; a rerun skips what
   is done, so an interrupted benchmark resumes.
3. Metrics (`metrics`), per-query values, bootstrap comparisons and costs go to
   `<out>/results.json` and `<out>/per_query_<dataset>.csv`, and `report` writes the
   Markdown report and its plots into `<out>`.

Settings shared by all systems: the product's search settings (`Settings.search`) with
k = 50, the largest cutoff. The query's source paper is excluded from every system.

A query line may have an empty `query` and may give `seed_ids`, papers the user starts
from (search/query_sets.py; bench/query_forms.py writes such sets). The given papers are
never counted as found: they leave the relevant set here (resolve_queries) and every ranked
list before scoring (Scored.from_records, bench/evaluation.py). How each system uses them
and an empty query: bench/systems.py.
"""

import csv
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from crase.bench.corruption import distractor_seeds, random_seeds
from crase.bench.evaluation import Scored, compare, evaluate, per_query_rows, summarize_cost
from crase.bench.metrics import CUTOFFS
from crase.bench.run_store import Record, RunStore
from crase.bench.systems import (
    BenchQuery,
    System,
    WalkConfig,
    backfill_rankings,
    bm25_system,
    cocitation_system,
    dense_system,
    fuse_rankings,
    walk_system,
)
from crase.errors import CraseError, EvaluationError
from crase.graph import Graph
from crase.ingest.paper_vectors import DenseIndex, load_or_build_index, read_corpus_texts
from crase.models.minilm import SentenceEncoder
from crase.models.paper_encoders import paper_encoder
from crase.search.order.model import MANIFEST, load_models
from crase.search.query_sets import read_query_file, seed_ids_of
from crase.search.roles.protocols import SearchBackends
from crase.settings import DatabaseSettings, SearchSettings, Settings, choices

DEPTH = max(CUTOFFS)
MAIN_SYSTEMS = ("bm25", "dense", "cocitation", "ppr-unweighted", "paper-default",
                "previous-default", "learned-order", "shipped", "crase-ppr", "uniform-edges",
                "crase-salsa", "recency", "hybrid")
# The baselines the shipped search must beat (the ranking goal, docs/benchmarks/report.md).
BASELINES = ("bm25", "dense", "ppr-unweighted")
# The Crase paper's seeding, which the product shipped before the query's own search
# seeded: L = 5 keyword sub-queries, m = 5 seeds each by relevance and recency, restart
# mass uniform over the seeds. The unweighted-walk baseline keeps it too.
PAPER_SEEDING = {"query_seeds": 0, "sub_queries": 5, "seeds_per_query": 5,
                 "seed_rule": "relevance-and-recency", "seed_weights": "uniform"}
# The hybrid, fixed before any result was seen: reciprocal-rank fusion of the graph walk
# and the product's own full-text index.
HYBRID_PARTS = ("crase-ppr", "bm25")
# Further fusions, reported for context (the text-only one separates the value of the graph
# from the value of fusing two text rankers).
EXTRA_FUSIONS = {"fusion: crase-ppr + dense": ("crase-ppr", "dense"),
                 "fusion: crase-ppr + bm25 + dense": ("crase-ppr", "bm25", "dense"),
                 "fusion: bm25 + dense (text only)": ("bm25", "dense")}
# The walk's own list, its empty places (a thin graph returns fewer than k papers) filled
# with BM25 hits: label -> (primary, fallback).
EXTRA_BACKFILLS = {"backfill: crase-ppr, then bm25": ("crase-ppr", "bm25")}
# Ablations vary one setting of the shipped configuration at a time:
# name -> (table label, WalkConfig field, values). Settings that only act on Delta (tau,
# theta, beta) vary the Delta-weighted walk instead (DELTA_ABLATIONS). A setting with
# choices runs every choice its settings field allows (a new walk joins the ablation);
# numbers are a chosen subset, checked within the field's bounds by tests/bench.
ABLATIONS: dict[str, tuple[str, str, tuple[Any, ...]]] = {
    "weighting": ("edge weights (Delta or uniform)", "weighting",
                  choices(SearchSettings, "weighting")),
    "seed_weights": ("seed restart weights", "seed_weights",
                     choices(SearchSettings, "seed_weights")),
    "query_seeds": ("seeds from the query's own search", "query_seeds", (5, 10, 20)),
    "sub_queries": ("plan sub-queries L", "sub_queries", (0, 5)),
    "seed_rule": ("seed rule", "seed_rule", choices(SearchSettings, "seed_rule")),
    "hops": ("hop radius", "hops", choices(SearchSettings, "hops")),
    "tau": ("tau", "tau", (0.0, 0.25, 0.5, 0.75)),
    "beta": ("beta", "beta", (0.0, 0.5, 1.0, 2.0)),
    "theta": ("theta", "theta", (0.3, 0.4, 0.5, 0.6)),
    "orientation": ("orientation", "orientation", choices(SearchSettings, "orientation")),
    "walk": ("walk", "walk", choices(SearchSettings, "walk")),
    "age": ("age reference", "age", ("current", "query")),
    "delta": ("Delta under the shipped search (coverage weighting at tau; * = the shipped "
              "uniform search)", "tau", (0.0, 0.25, 0.5, 0.75)),
}
DELTA_ABLATIONS = ("tau", "beta", "theta")
# Ablations of the shipped search itself (its order and fill kept), each value compared with
# the shipped search as it runs: whether Delta earns its place in the product, not in the
# walk's own list. Theta is the configured one (set it to the entailment scorer's own
# calibrated threshold).
SHIPPED_ABLATIONS = ("delta",)
CORRUPTIONS = ("distractor", "random")
# The encoder keeps this many sentence vectors in memory: every claim of a 30K-paper corpus,
# so an edge scored during the benchmark never re-embeds a claim it has seen.
ENCODER_CACHE = 250_000


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    queries_path: Path
    database: DatabaseSettings


@dataclass(frozen=True)
class Options:
    systems: tuple[str, ...] = MAIN_SYSTEMS
    limit: int | None = None
    ablations: tuple[str, ...] = ()  # names of ABLATIONS to run
    corruption: bool = False
    subset: int = 50
    order_ablations: Path | None = None  # a folder of learned-order model folders


@dataclass(frozen=True)
class Job:
    """One system setting over a query set of one dataset."""

    phase: int  # run order: fast systems first, corrupted seeds after their clean run
    dataset: str
    key: str
    kind: str  # bm25 | dense | cocitation | walk
    config: WalkConfig | None = None
    subset_only: bool = False


@dataclass
class Dataset:
    spec: DatasetSpec
    graph: Graph
    queries: list[BenchQuery]
    dropped: dict[str, int]
    relevant_outside: int
    _index: DenseIndex | None = None
    _corpus_ids: list[str] | None = None

    @property
    def subset(self) -> list[BenchQuery]:
        return self.queries[: self.subset_size]

    subset_size: int = 50


@dataclass
class Resources:
    """Built on first need and shared by every dataset: the encoder and the backends."""

    settings: Settings
    _encoder: SentenceEncoder | None = None
    _backends: SearchBackends | None = None

    @property
    def encoder(self) -> SentenceEncoder:
        if self._encoder is None:
            self._encoder = paper_encoder(self.settings.models.paper_encoder,
                                          cache_size=ENCODER_CACHE)
        return self._encoder

    @property
    def backends(self) -> SearchBackends:
        if self._backends is None:
            from crase.search.roles.from_settings import build_search_backends

            self._backends = build_search_backends(self.settings, encoder=self.encoder)
        return self._backends


@dataclass
class ProgressLine:
    """`[dataset] system  done/total  s/query  ETA`, redrawn on a terminal, else a line
    every `interval_s`."""

    label: str
    total: int
    started: float = field(default_factory=time.perf_counter)
    last: float = 0.0
    interval_s: float = 30.0

    def update(self, done: int, final: bool = False) -> None:
        now = time.perf_counter()
        tty = sys.stderr.isatty()
        if not final and not tty and now - self.last < self.interval_s:
            return
        self.last = now
        elapsed = now - self.started
        per = elapsed / done if done else float("nan")
        eta = per * (self.total - done) if done else float("nan")
        text = (f"{self.label}  {done}/{self.total} queries  {per:6.1f} s/query  "
                f"ETA {format_duration(eta)}")
        if tty:
            sys.stderr.write("\r" + text.ljust(100) + ("\n" if final else ""))
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def format_duration(seconds: float) -> str:
    if seconds != seconds:
        return "--"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def resolve_queries(graph: Graph, rows: list[dict[str, Any]]
                    ) -> tuple[list[BenchQuery], dict[str, int], int]:
    """Queries restricted to the graph: relevant ids kept only where the paper exists,
    queries without relevant papers or without a source paper in the graph dropped. Given
    papers (`seed_ids`) are kept where they are in the graph and taken out of the relevant
    set (they are never counted as found); a query left with neither text nor a given
    paper in the graph is dropped."""
    wanted = sorted({r for row in rows for r in row["relevant_ids"]}
                    | {r for row in rows for r in seed_ids_of(row)}
                    | {row["source_paper_id"] for row in rows})
    present = {row["id"] for row in graph.read("match_paper_ids", ids=wanted)}
    years = {row["id"]: row["year"] for row in graph.read(
        "read_papers", ids=sorted({row["source_paper_id"] for row in rows} & present))}
    queries, dropped, outside = [], {"no relevant paper in the graph": 0,
                                     "source paper not in the graph": 0}, 0
    for row in rows:
        outside += len(set(row["relevant_ids"]) - present)
        query = query_in(row, present, years.get(row["source_paper_id"]))
        if isinstance(query, str):
            dropped[query] = dropped.get(query, 0) + 1
        else:
            queries.append(query)
    return queries, dropped, outside


def query_in(row: dict[str, Any], present: set[str], year: int | None) -> BenchQuery | str:
    """A query line restricted to the `present` papers (resolve_queries' rules), or why it
    is dropped."""
    source = row["source_paper_id"]
    seeds = tuple(p for p in seed_ids_of(row) if p in present)
    relevant = frozenset(r for r in row["relevant_ids"] if r in present) - {source} - set(seeds)
    if source not in present:
        return "source paper not in the graph"
    if not relevant:
        return "no relevant paper in the graph"
    if not seeds and not row["query"].strip():
        return "no query text and no given paper in the graph"
    return BenchQuery(row["query_id"], row["query"], relevant, source, year, seeds)


def open_dataset(spec: DatasetSpec, options: Options) -> Dataset:
    graph = Graph.connect(spec.database)
    queries, dropped, outside = resolve_queries(graph, read_query_file(spec.queries_path))
    if options.limit is not None:
        queries = queries[: options.limit]
    if not queries:
        raise EvaluationError(f"{spec.queries_path}: no query can be evaluated on this graph")
    return Dataset(spec, graph, queries, dropped, outside, subset_size=options.subset)


def main_configs(base: WalkConfig) -> dict[str, WalkConfig]:
    """The walks of the main table. `base` is the product's default setting; `shipped` is
    the search exactly as `crase search` runs it (its fill included), the others are the
    walk's own list (fill none)."""
    walk = base.but(fill="none", walk="ppr", order="walk")
    delta = walk.but(weighting="coverage")
    return {"ppr-unweighted": walk.but(weighting="uniform", **PAPER_SEEDING),
            "paper-default": delta.but(fill="text", order="walk", **PAPER_SEEDING),
            "previous-default": base.but(order="walk"),
            "learned-order": base.but(order="learned"),
            "shipped": base,
            "crase-ppr": delta,
            "uniform-edges": walk.but(weighting="uniform"),
            "crase-salsa": delta.but(walk="salsa"),
            "recency": delta.but(age="query")}


def plan_jobs(datasets: list[Dataset], base: WalkConfig, options: Options) -> list[Job]:
    walks = main_configs(base)
    wanted = set(options.systems)
    if "hybrid" in wanted:
        wanted |= set(HYBRID_PARTS)
    if options.corruption or set(options.ablations) - set(SHIPPED_ABLATIONS):
        wanted.add("crase-ppr")
    if set(options.ablations) & set(SHIPPED_ABLATIONS):
        wanted.add("shipped")
    models = order_model_files(options.order_ablations) if options.order_ablations else []
    if models:  # each model is compared with both
        wanted |= {"learned-order", "previous-default"}
    jobs = []
    for data in datasets:
        name = data.spec.name
        if "bm25" in wanted:
            jobs.append(Job(0, name, "bm25", "bm25"))
        if "dense" in wanted:
            jobs.append(Job(1, name, "dense", "dense"))
        if "cocitation" in wanted and any(q.seed_ids for q in data.queries):
            # It ranks from given papers alone: nothing to run on a set without them.
            jobs.append(Job(1, name, "cocitation", "cocitation"))
        for system, config in walks.items():
            if system in wanted:
                jobs.append(Job(2 if system == "ppr-unweighted" else 3, name, config.key(),
                                "walk", config))
        if options.ablations:
            for config in ablation_configs(base, options.ablations).values():
                jobs.append(Job(4, name, config.key(), "walk", config, subset_only=True))
        if options.corruption:
            for kind in CORRUPTIONS:
                config = base.but(walk="ppr", fill="none", order="walk", seeds=kind)
                jobs.append(Job(5, name, config.key(), "walk", config, subset_only=True))
        for config in order_ablation_configs(base, models).values():
            jobs.append(Job(6, name, config.key(), "walk", config))
    return sorted(jobs, key=lambda job: job.phase)


def order_model_files(folder: Path) -> list[Path]:
    """The model folders of an order-model ablation folder (each holds a model.json), by
    name; refuses a folder without one."""
    folders = sorted(path.parent for path in folder.glob(f"*/{MANIFEST}"))
    if not folders:
        raise EvaluationError(f"{folder}: no learned-order model folder (*/{MANIFEST})")
    return folders


def order_ablation_configs(base: WalkConfig, models: list[Path]) -> dict[Path, WalkConfig]:
    """Model file -> the learned order of the main table with that model."""
    learned = main_configs(base)["learned-order"]
    return {path: learned.but(order_model=str(path.resolve())) for path in models}


def ablation_base(base: WalkConfig, name: str) -> WalkConfig:
    """The setting an ablation varies: the shipped walk's own list, Delta-weighted for the
    settings that only act on Delta; for SHIPPED_ABLATIONS, the shipped search
    Delta-weighted."""
    if name in SHIPPED_ABLATIONS:
        return base.but(weighting="coverage")
    clean = base.but(walk="ppr", fill="none", order="walk")
    return clean.but(weighting="coverage") if name in DELTA_ABLATIONS else clean


def ablation_configs(base: WalkConfig, names: tuple[str, ...]
                     ) -> dict[tuple[str, Any], WalkConfig]:
    """(table label, value) -> setting, for the named ablations in ABLATIONS order."""
    return {(label, value): ablation_base(base, name).but(**{field_name: value})
            for name, (label, field_name, values) in ABLATIONS.items() if name in names
            for value in values}


def run_jobs(jobs: list[Job], datasets: dict[str, Dataset], store: RunStore,
             resources: Resources) -> None:
    done_keys: set[tuple[str, str, bool]] = set()
    for job in jobs:
        data = datasets[job.dataset]
        queries = data.subset if job.subset_only else data.queries
        # A setting shared by two jobs (an ablation at the shipped value) runs once.
        if (job.dataset, job.key, job.subset_only) in done_keys:
            continue
        done_keys.add((job.dataset, job.key, job.subset_only))
        finished = store.completed(job.dataset, job.key)
        todo = [q for q in queries if q.id not in finished]
        if not todo:
            continue
        system = build_system(job, data, store, resources)
        progress = ProgressLine(f"[{job.dataset}] {job.key}", len(todo))
        for count, query in enumerate(todo, start=1):
            store.append(job.dataset, job.key, run_one(system, query))
            progress.update(count, final=count == len(todo))


def run_one(system: System, query: BenchQuery) -> Record:
    started = time.perf_counter()
    try:
        run = system(query)
    except CraseError as err:  # recorded and retried on the next run; figures count it empty
        return {"query_id": query.id, "error": f"{type(err).__name__}: {err}",
                "seconds": time.perf_counter() - started}
    return {"query_id": query.id, **run.to_record()}


def build_system(job: Job, data: Dataset, store: RunStore, resources: Resources) -> System:
    if job.kind == "bm25":
        return bm25_system(data.graph, DEPTH)
    if job.kind == "dense":
        return dense_system(dense_index(data, resources), resources.encoder, DEPTH)
    if job.kind == "cocitation":
        return cocitation_system(data.graph, DEPTH)
    assert job.config is not None
    seeds_for = None
    if job.config.seeds != "plan":
        seeds_for = corrupted_seeds(job.config, data, store)
    return walk_system(data.graph, resources.backends, job.config, resources.settings.search,
                       DEPTH, seeds_for)


def dense_index(data: Dataset, resources: Resources) -> DenseIndex:
    if data._index is None:
        label = f"[{data.spec.name}] dense index"

        def report(done: int, total: int, seconds: float) -> None:
            rate = done / seconds if seconds else 0.0
            left = (total - done) / rate if rate else float("nan")
            print(f"{label}: {done}/{total} papers, {rate:.1f}/s, ETA {format_duration(left)}",
                  file=sys.stderr, flush=True)

        data._index = load_or_build_index(data.graph, resources.encoder,
                                          resources.settings.var_dir / "vectors",
                                          progress=report)
    return data._index


def corrupted_seeds(config: WalkConfig, data: Dataset,
                    store: RunStore) -> Callable[[BenchQuery], list[str]]:
    """Replacement seeds, as many as the clean run of the same query used."""
    clean = store.completed(data.spec.name, config.but(seeds="plan").key())

    def seeds_for(query: BenchQuery) -> list[str]:
        if query.id not in clean:
            raise EvaluationError(f"no clean run of {query.id} to corrupt")
        count = len(clean[query.id]["seeds"])
        if config.seeds == "distractor":
            return distractor_seeds(data.graph, query, count)
        if data._corpus_ids is None:
            data._corpus_ids = read_corpus_texts(data.graph).ids
        return random_seeds(data._corpus_ids, query, count)
    return seeds_for


def run_quality(settings: Settings, specs: list[DatasetSpec], out: Path, options: Options,
                command: str) -> Path:
    """Run (or resume) everything, then write results.json, the per-query CSVs and the
    report; returns the report's path."""
    unknown = set(options.systems) - set(MAIN_SYSTEMS)
    if unknown:
        raise EvaluationError(f"unknown systems {sorted(unknown)}; known: {MAIN_SYSTEMS}")
    unknown = set(options.ablations) - set(ABLATIONS)
    if unknown:
        raise EvaluationError(f"unknown ablations {sorted(unknown)}; known: {list(ABLATIONS)}")
    if options.order_ablations:  # a file the search would refuse fails before any run
        for path in order_model_files(options.order_ablations):
            load_models(path)
    base = WalkConfig.from_settings(settings.search)
    datasets = {spec.name: open_dataset(spec, options) for spec in specs}
    store = RunStore(out / "runs")
    try:
        run_jobs(plan_jobs(list(datasets.values()), base, options), datasets, store,
                 Resources(settings))
    finally:
        for data in datasets.values():
            data.graph.close()
    results = collect_results(datasets, store, base, options, command)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str),
                                      encoding="utf-8")
    from crase.bench.report import write_report

    return write_report(results, out)


def collect_results(datasets: dict[str, Dataset], store: RunStore, base: WalkConfig,
                    options: Options, command: str) -> dict[str, Any]:
    return {
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "shipped": base.__dict__,
        "current_year": date.today().year,
        "depth": DEPTH,
        "options": {"systems": list(options.systems), "limit": options.limit,
                    "ablations": list(options.ablations), "corruption": options.corruption,
                    "subset": options.subset,
                    "order_ablations": (str(options.order_ablations)
                                         if options.order_ablations else None)},
        "datasets": {name: dataset_results(data, store, base, options)
                     for name, data in datasets.items()},
    }


def dataset_results(data: Dataset, store: RunStore, base: WalkConfig,
                    options: Options) -> dict[str, Any]:
    name = data.spec.name
    walks = main_configs(base)
    keys = {"bm25": "bm25", "dense": "dense", "cocitation": "cocitation",
            **{system: config.key() for system, config in walks.items()}}
    records = {system: store.load(name, key) for system, key in keys.items()}
    scored = {system: Scored.from_records(recs, data.queries) for system, recs in
              records.items() if recs}
    if all(part in scored for part in HYBRID_PARTS):
        scored["hybrid"] = fused(scored, HYBRID_PARTS)
    extra = {label: fused(scored, parts) for label, parts in EXTRA_FUSIONS.items()
             if all(p in scored for p in parts)}
    extra |= {label: backfilled(scored, *parts) for label, parts in EXTRA_BACKFILLS.items()
              if all(p in scored for p in parts)}
    rows: list[dict[str, Any]] = []
    main = []
    for system in MAIN_SYSTEMS:
        if system not in scored or system not in options.systems:
            continue
        entry = {"system": system, "key": keys.get(system, "+".join(HYBRID_PARTS)),
                 "metrics": evaluate(scored[system])}
        if system in records:
            entry["cost"] = summarize_cost(
                list(records[system].values()), walk=system in walks,
                coverage=system in walks and walks[system].weighting == "coverage")
        if "shipped" in scored and system != "shipped":
            entry["vs_shipped"] = compare(scored[system], scored["shipped"])
        if "previous-default" in scored and system != "previous-default":
            entry["vs_previous_default"] = {
                str(k): compare(scored[system], scored["previous-default"], k)
                for k in CUTOFFS}
        main.append(entry)
        rows += per_query_rows(scored[system], system)
    fusions = []
    for label, fusion in extra.items():
        entry = {"system": label, "metrics": evaluate(fusion)}
        if "shipped" in scored:
            entry["vs_shipped"] = compare(fusion, scored["shipped"])
        fusions.append(entry)
        rows += per_query_rows(fusion, label)
    result: dict[str, Any] = {
        "queries_file": str(data.spec.queries_path), "queries": len(data.queries),
        "dropped": data.dropped, "relevant_outside_graph": data.relevant_outside,
        "relevant_mean": sum(len(q.relevant) for q in data.queries) / len(data.queries),
        **query_form_counts(data.queries),
        "source_years": sorted({q.year for q in data.queries if q.year is not None}),
        "subset": len(data.subset), "subset_ids": [q.id for q in data.subset],
        "main": main, "fusions": fusions,
    }
    if options.ablations:
        result["ablations"], ablation_rows = ablation_results(data, store, base,
                                                              options.ablations)
        rows += ablation_rows
    if options.corruption:
        result["corruption"], corruption_rows = corruption_results(data, store, base)
        rows += corruption_rows
    if options.order_ablations:
        (result["order_ablation_reference"], result["order_ablations"],
         order_rows) = order_ablation_results(data, store, base, options.order_ablations)
        rows += order_rows
    write_per_query(rows, data.spec.name, store.folder.parent)
    return result


def query_form_counts(queries: list[BenchQuery]) -> dict[str, Any]:
    """How many queries come with given papers or without text; nothing for a set of
    plain text queries, whose results read as before."""
    seeded = [q for q in queries if q.seed_ids]
    empty = sum(not q.has_text for q in queries)
    if not seeded and not empty:
        return {}
    return {"queries_with_seed_ids": len(seeded), "queries_without_text": empty,
            "seed_ids_mean": (sum(len(q.seed_ids) for q in seeded) / len(seeded)
                              if seeded else 0.0)}


def fused(scored: dict[str, Scored], parts: tuple[str, ...]) -> Scored:
    first = scored[parts[0]]
    rankings = [[paper for paper, _ in fuse_rankings([scored[p].rankings[i] for p in parts],
                                                     DEPTH)]
                for i in range(len(first.queries))]
    return Scored(first.queries, rankings, max(scored[p].failed for p in parts),
                  max(scored[p].missing for p in parts))


def backfilled(scored: dict[str, Scored], primary: str, fallback: str) -> Scored:
    first, second = scored[primary], scored[fallback]
    rankings = [backfill_rankings(first.rankings[i], second.rankings[i], DEPTH)
                for i in range(len(first.queries))]
    return Scored(first.queries, rankings, max(first.failed, second.failed),
                  max(first.missing, second.missing))


def ablation_results(data: Dataset, store: RunStore, base: WalkConfig,
                     names: tuple[str, ...]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One table per ablation; each row is compared with the setting the ablation varies
    (marked `shipped`: the shipped walk, or the Delta walk for DELTA_ABLATIONS); each row
    of a SHIPPED_ABLATIONS table is compared with the shipped search, its first row."""
    tables: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for name, (label, field_name, values) in ABLATIONS.items():
        if name not in names:
            continue
        reference = base if name in SHIPPED_ABLATIONS else ablation_base(base, name)
        varied = ablation_base(base, name)
        reference_records = store.load(data.spec.name, reference.key())
        reference_scored = Scored.from_records(reference_records, data.subset)
        reference_cost = summarize_cost(
            [reference_records[q.id] for q in data.subset if q.id in reference_records],
            walk=True, coverage=True).get("cold_calls_mean") if reference_records else None
        settings: list[WalkConfig] = [reference] if name in SHIPPED_ABLATIONS else []
        settings += [varied.but(**{field_name: value}) for value in values]
        for config in settings:
            value = ("uniform" if config.weighting == "uniform" and name in SHIPPED_ABLATIONS
                     else getattr(config, field_name))
            records = store.load(data.spec.name, config.key())
            subset_records = [records[q.id] for q in data.subset if q.id in records]
            scored = Scored.from_records(records, data.subset)
            cost = summarize_cost(subset_records, walk=True, coverage=True)
            relative = ((cost.get("cold_calls_mean", 0.0) / reference_cost)
                        if reference_cost else None)
            tables.setdefault(label, []).append({
                "value": value, "key": config.key(), "shipped": config == reference,
                "metrics": evaluate(scored), "cost": cost, "relative_cost": relative,
                "vs_shipped": (None if config == reference
                               else compare(scored, reference_scored))})
            rows += per_query_rows(scored, f"ablation {label}={value}")
    return tables, rows


def order_ablation_results(data: Dataset, store: RunStore, base: WalkConfig, folder: Path
                            ) -> tuple[dict[str, Any], list[dict[str, Any]],
                                       list[dict[str, Any]]]:
    """The learned order with each model file of `folder`, on every query: one row per
    file, compared with the learned order with the search's own model (the reference) and
    with the previous default at every K; and the reference row itself."""
    walks = main_configs(base)
    reference_records = store.load(data.spec.name, walks["learned-order"].key())
    reference = Scored.from_records(reference_records, data.queries)
    previous = Scored.from_records(store.load(data.spec.name,
                                              walks["previous-default"].key()), data.queries)
    table, rows = [], []
    for path, config in order_ablation_configs(base, order_model_files(folder)).items():
        models = load_models(path)
        described = models.for_form("text") or next(iter(models.forms.values()))
        records = store.load(data.spec.name, config.key())
        scored = Scored.from_records(records, data.queries)
        table.append({
            "model": path.name, "file": str(path), "key": config.key(),
            "features": list(described.features),  # the text form's, where the folder has it
            "training": described.summary()["training"],
            "applied": sum(order_model(r) == models.name for r in on_queries(records, data)),
            "metrics": evaluate(scored),
            "vs_shipped_model": compare(scored, reference),
            "vs_previous_default": {str(k): compare(scored, previous, k) for k in CUTOFFS}})
        rows += per_query_rows(scored, f"learned order, model {path.name}")
    names = [order_model(r) for r in on_queries(reference_records, data)]
    reference_entry = {"key": walks["learned-order"].key(),
                       "models": sorted({name for name in names if name}),
                       "applied": sum(name is not None for name in names),
                       "metrics": evaluate(reference),
                       "vs_previous_default": {str(k): compare(reference, previous, k)
                                               for k in CUTOFFS}}
    return reference_entry, table, rows


def on_queries(records: dict[str, Record], data: Dataset) -> list[Record]:
    return [records[q.id] for q in data.queries if q.id in records]


def order_model(record: Record) -> str | None:
    """The name of the model that ordered a run's list; None where the run failed or the
    learned order did not apply (a short query, a walk with too few papers)."""
    order = (record.get("counts") or {}).get("order") or {}
    model = order.get("model") or {}
    name = model.get("name")
    return str(name) if name else None


def corruption_results(data: Dataset, store: RunStore, base: WalkConfig
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    table, rows = [], []
    for kind in ("plan", *CORRUPTIONS):
        config = base.but(walk="ppr", fill="none", order="walk", seeds=kind)
        records = store.load(data.spec.name, config.key())
        scored = Scored.from_records(records, data.subset)
        label = {"plan": "clean seeds", "distractor": "lexically similar distractors",
                 "random": "random papers"}[kind]
        subset_records = [records[q.id] for q in data.subset if q.id in records]
        table.append({"seeds": label, "key": config.key(), "metrics": evaluate(scored),
                      "cost": summarize_cost(subset_records, walk=True, coverage=True)})
        rows += per_query_rows(scored, f"corruption {kind}")
    return table, rows


def write_per_query(rows: list[dict[str, Any]], dataset: str, out: Path) -> None:
    if not rows:
        return
    path = out / f"per_query_{dataset}.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
