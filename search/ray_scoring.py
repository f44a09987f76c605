"""`crase score --engine ray`: the corpus-wide scoring pass spread over a Ray cluster.

Why Ray actors and not Ray Data `map_batches`: the input is a list of edge ids the driver
already holds, and the output is written to Neo4j by the worker itself, so there is no
dataset to stream, only a pool of long-lived workers. An actor is exactly that: one process
per worker that connects to the graph and builds its backends once from the settings (the
encoder weights load once per worker, its claim-embedding cache lives as long as the
worker), then scores batch after batch with `score_batch`, the same function the
single-process loop runs. vLLM's own batch-inference pattern (a callable class with
`concurrency=N`) is this pool under another name; its replicas, when used, are served as
OpenAI-compatible endpoints that the workers call through the model settings.

The driver reads the unscored edges once, splits them into batches and keeps one batch in
flight per worker, so a worker that dies loses only the batch it held. Every batch is
written before it counts, and scoring is idempotent, so a rerun scores exactly what is
still unscored. Ray is imported here only, and only when this engine is asked for.
"""

import importlib
import os
import time
from collections import deque
from types import ModuleType
from typing import Any

from crase.database import Neo4jServer
from crase.errors import RayUnavailable
from crase.graph import Graph
from crase.search.expansion import Edge
from crase.search.grounding import batched
from crase.search.scoring_worker import (
    STAGE,
    BackendsFactory,
    BatchCounts,
    Progress,
    ScoringReport,
    find_unscored_edges,
    score_batch,
)
from crase.settings import Settings

RAY_PIN = "ray==2.60.0"  # the version the ray extra of pyproject.toml installs


def import_ray(module: str = "ray") -> ModuleType:
    """`module` of the Ray package, or RayUnavailable saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise RayUnavailable(
            f"--engine ray needs the {module.split('.')[0]!r} package, which is not "
            f"installed; install it with: pip install \"{RAY_PIN}\" (or the extra: "
            "pip install -e \".[ray]\"), or score on one machine with --engine local"
        ) from err


class ScoringWorker:
    """One Ray worker: its own graph connection and backends, built once from the settings
    it was sent as plain data (the database password comes from its runtime_env)."""

    def __init__(self, plain_settings: dict[str, Any], factory: BackendsFactory,
                 theta: float) -> None:
        # Settings(**...) rather than model_validate: it reads CRASE_DATABASE__PASSWORD from
        # the environment Ray's runtime_env gave this process, for the one field not sent.
        settings = Settings(**plain_settings)
        self.graph = Graph.connect(settings.database)
        # Here, not on the first batch: a worker that cannot reach the database (a Bolt URI
        # that means another machine there) fails to start and says why.
        self.graph.check_connection()
        self.backends = factory(settings)
        self.theta = theta
        node = import_ray().get_runtime_context().get_node_id()
        self.name = f"node {node[:8]} pid {os.getpid()}"

    def ready(self) -> str:
        return self.name

    def score(self, batch: list[Edge]) -> BatchCounts:
        counts = score_batch(self.graph, self.backends, batch, self.theta)
        counts.worker = self.name
        return counts


def worker_settings(settings: Settings) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings as plain data for the workers, and the environment they also need: the
    Bolt URI as the driver resolved it and the password, which stays out of the data (Ray
    keeps task arguments in its object store) and travels in the workers' runtime_env."""
    plain = settings.model_dump(mode="json", exclude={"database": {"password"}})
    plain["database"]["uri"] = settings.database.bolt_uri()
    env = {"CRASE_DATABASE__URI": settings.database.bolt_uri(),
           "CRASE_DATABASE__PASSWORD": Neo4jServer(settings.database).password()}
    return plain, env


def score_corpus_on_ray(settings: Settings, factory: BackendsFactory, batch_size: int = 2000,
                        limit: int | None = None, workers: int = 2, address: str | None = None,
                        progress: Progress | None = None) -> ScoringReport:
    """The same pass as `score_corpus`, its batches run by `workers` Ray actors (one CPU
    each). `address`: None starts a local Ray instance, "auto" joins the cluster this
    machine belongs to, else a cluster's address (host:port or ray://host:10001)."""
    ray = import_ray()
    with Graph.connect(settings.database) as graph:
        edges = find_unscored_edges(graph, factory(settings).scorer, limit)
    plain, env = worker_settings(settings)
    started_here = not ray.is_initialized()  # else: a caller's Ray session, left to it
    if started_here and address is None:
        ray.init(num_cpus=workers, include_dashboard=False)
    elif started_here:
        ray.init(address=address)
    try:
        check_capacity(ray, workers, address)
        # The environment goes with the workers, not the session: also in a caller's one.
        actor_class = ray.remote(num_cpus=1, max_restarts=0,
                                 runtime_env={"env_vars": env})(ScoringWorker)
        pool = [actor_class.remote(plain, factory, settings.search.theta)
                for _ in range(workers)]
        try:
            return run_batches(ray, started_workers(ray, pool), edges, batch_size, progress)
        finally:
            for actor in pool:
                ray.kill(actor)
    finally:
        if started_here:
            ray.shutdown()


def check_capacity(ray: ModuleType, workers: int, address: str | None) -> None:
    """Each worker takes one CPU; more workers than the cluster has CPUs would wait forever."""
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < workers:
        where = f"at {address}" if address else "started here"
        raise RayUnavailable(f"the Ray cluster {where} has {cpus} CPUs for {workers} workers "
                             f"(one CPU each); give --workers {max(cpus, 1)} or fewer, or add "
                             "nodes to the cluster")


def started_workers(ray: ModuleType, pool: list[Any]) -> list[Any]:
    """The workers that came up (connected, backends built), so the clock starts with the
    scoring; RayUnavailable with the first reason when none did."""
    errors = import_ray("ray.exceptions")
    ready, reasons = [], []
    for actor in pool:
        try:
            ray.get(actor.ready.remote())
            ready.append(actor)
        except errors.RayActorError as err:
            reasons.append(describe_death(err))
    if not ready:
        raise RayUnavailable(f"no Ray worker started ({reasons[0]}); every worker node needs "
                             "crase installed and the database reachable at "
                             "CRASE_DATABASE__URI (docs/distributed-scoring.md)")
    return ready


def run_batches(ray: ModuleType, pool: list[Any], edges: list[Edge], batch_size: int,
                progress: Progress | None) -> ScoringReport:
    """One batch in flight per live worker until every batch is done or no worker is left;
    a batch that raised, or whose worker died, is counted as failed and left unscored."""
    errors = import_ray("ray.exceptions")
    report = ScoringReport(edges_found=len(edges))
    queue = deque(batched(edges, batch_size))
    idle = list(pool)
    in_flight: dict[Any, tuple[Any, list[Edge]]] = {}
    start = time.perf_counter()
    while queue or in_flight:
        while idle and queue:
            actor, batch = idle.pop(), queue.popleft()
            in_flight[actor.score.remote(batch)] = (actor, batch)
        if not in_flight:
            break  # every worker died; what is left stays unscored
        [ref], _ = ray.wait(list(in_flight), num_returns=1)
        actor, batch = in_flight.pop(ref)
        try:
            report.add(ray.get(ref))
            idle.append(actor)
        except errors.RayActorError as err:
            report.add_failed_batch(len(batch), describe_death(err))
        except errors.RayTaskError as err:
            report.add_failed_batch(len(batch), describe_cause(err))
            idle.append(actor)
        report.seconds = time.perf_counter() - start
        if progress is not None:
            progress(STAGE, report.edges_done, report.edges_found)
    for batch in queue:
        report.add_failed_batch(len(batch), "no worker left")
    report.seconds = time.perf_counter() - start
    return report


def describe_cause(err: Any) -> str:
    """The error a batch raised inside its worker, in one line."""
    cause = getattr(err, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {first_line(cause)}"
    return first_line(err)


def describe_death(err: Any) -> str:
    """Why a worker is gone, in one line: the error its start raised (the last line of the
    traceback Ray sends), or how its process ended."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    last = lines[-1][:300] if lines else type(err).__name__
    if getattr(err, "actor_init_failed", False):
        return f"a worker could not start: {last}"
    return f"a worker died: {last}"


def first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(err).__name__
