"""GET /runs, GET /runs/{id} and what hangs off a run: its evidence graph, cancellation,
exports. The answers are typed (the models below), so the OpenAPI schema says what each
JSON field holds."""

from typing import Annotated, Any

from litestar import Controller, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, Parameter
from pydantic import BaseModel, Field

from crase.api.exports import ExportFormat, export_run
from crase.api.run_views import (
    describe_run,
    evidence_graph,
    list_runs,
    read_run_record,
    weighed_graph,
)
from crase.api.runs import FINISHED, RunRegistry
from crase.errors import RunNotCancellable, RunNotFound
from crase.graph import Graph

MAX_RUNS_PAGE = 100
MAX_RUNS_OFFSET = 100_000


class RunSummary(BaseModel):
    id: str
    kind: str = Field(description="search, idea, or a research tool's kind")
    query: str | None = Field(description="The search's question or the idea")
    status: str = Field(description="running, done, failed or cancelled")
    started: str | None = Field(description="ISO time")
    finished: str | None = Field(description="ISO time; null while it runs")
    error: str | None
    results: int = Field(description="How many papers the run returned")


class RunList(BaseModel):
    total: int = Field(description="Runs of the kind asked for, all pages")
    offset: int
    limit: int
    runs: list[RunSummary] = Field(description="Newest first")


class StageState(BaseModel):
    state: str = Field(description="pending, running or done")
    done: int | None = Field(description="Items finished, where the stage counts them")
    total: int | None


class RunProgress(BaseModel):
    stage: str | None = Field(description="The stage running now")
    stages: dict[str, StageState]


class RunSeed(BaseModel):
    paper_id: str
    title: str | None
    sub_query_index: int | None = Field(
        description="0: the query itself; l: the plan's l-th sub-query; -1: given")
    sub_query: str | None
    relevance_rank: int | None
    recency_rank: int | None
    weight: float | None
    restart_share: float | None


class GivenPaperView(BaseModel):
    id: str
    title: str | None = Field(description="Null until the run has seeded it")


# Links to a paper by kind (arxiv, doi, semantic_scholar), only for the identifiers it has
# (crase/paper_links.py).
LINKS_DESCRIPTION = "URLs by kind (arxiv, doi, semantic_scholar), for the ids the paper has"


class RunResult(BaseModel):
    rank: int
    score: float | None = Field(description="The run's score; null for an idea run")
    id: str
    title: str | None
    year: int | None
    authors: list[str]
    abstract: str | None
    venue: str | None
    journal_ref: str | None
    arxiv_id: str | None
    doi: str | None
    s2_id: str | None
    links: dict[str, str] = Field(description=LINKS_DESCRIPTION)
    evidence: dict[str, Any] | None = Field(description="Why the paper was returned")


class RelatedWork(BaseModel):
    id: str
    title: str | None
    year: int | None
    authors: list[str]
    venue: str | None
    journal_ref: str | None
    arxiv_id: str | None
    doi: str | None
    s2_id: str | None
    links: dict[str, str] = Field(description=LINKS_DESCRIPTION)
    rank: int | None = Field(description="The paper's own rank where the run returned it")
    count: int = Field(description="Prior works: how many returned papers cite it; "
                                   "derivative works: how many returned papers it cites")
    of: int = Field(description="How many papers the run returned")
    by_ranks: list[int] = Field(description="The ranks of those returned papers")
    why: str = Field(description="The count in words")


class RunView(BaseModel):
    id: str
    kind: str = Field(description="search, idea, or a research tool's kind")
    query: str | None
    status: str = Field(description="queued, running, done, failed or cancelled")
    outcome: str | None = Field(description="An idea run's outcome: done, partial, "
                                            "ranking_failed, failed or cancelled; null for "
                                            "a search")
    submitted: str | None
    started: str | None
    finished: str | None
    error: str | None
    params: dict[str, Any]
    backends: dict[str, Any]
    plan: list[str]
    counts: dict[str, Any]
    timings: dict[str, float]
    usage: dict[str, Any]
    progress: RunProgress
    tracked: bool = Field(description="Whether this server runs it (else: recorded only)")
    seeds: list[RunSeed]
    given_papers: list[GivenPaperView] = Field(
        default_factory=list,
        description="A search from papers: the papers it started from (its given_papers), each "
                    "a seed and never a result; each result's evidence.reached_from names "
                    "the one it connects to")
    results: list[RunResult]
    prior_works: list[RelatedWork] = Field(
        description="A search's prior works: the papers of its evidence graph its returned "
                    "papers cite most (at least two of them), most cited first")
    derivative_works: list[RelatedWork] = Field(
        description="A search's derivative works: the papers of its evidence graph that "
                    "cite most of its returned papers (at least two), most citing first")


class GraphNode(BaseModel):
    id: str
    title: str | None
    year: int | None
    first_author: str | None = Field(description="As the corpus spells it")
    seed: bool | None
    kept: bool | None
    reason: str | None = Field(description="Why the paper was cut, if it was")
    rank: int | None
    score: float | None


class GraphEdge(BaseModel):
    citing: str
    cited: str
    delta: float | None = Field(description="Coverage affinity at the run's theta; null "
                                            "where the run computed none (uniform weighting)")
    retained: bool
    reason: str | None = Field(description="Why the edge was pruned, if it was")
    influential: bool | None = Field(
        None, description="The publisher's influential mark (Semantic Scholar's citations "
                          "dataset), shown for a run with influential weighting; null "
                          "otherwise or where the corpus has none")


class GraphCounts(BaseModel):
    nodes: int
    nodes_kept: int
    edges: int
    edges_retained: int


class EvidenceGraph(BaseModel):
    run_id: str
    query: str | None
    theta: float
    tau: float
    weighting: str = Field(description="coverage (edges weighed and pruned by Delta), "
                                       "uniform (every edge among the kept papers walked "
                                       "alike) or influential (weighed by the publisher's "
                                       "influential mark)")
    edge_weight: str = Field(description="What an edge is in this run: a citation edge "
                                         "weighed by its Delta, an unweighted citation "
                                         "edge, or one weighed by the influential mark")
    influential_weight: float | None = Field(
        None, description="An influential run's weight of a marked citation (others 1)")
    scorer: str | None = Field(description="The entailment scorer that computed Delta; null "
                                           "for a uniform run, which scored nothing")
    counts: GraphCounts
    nodes: list[GraphNode]
    edges: list[GraphEdge]


class CancelAnswer(BaseModel):
    run_id: str
    status: str
    cancel_requested: bool


class RunController(Controller):
    path = "/runs"
    tags = ["runs"]

    @get("/", sync_to_thread=True, summary="The runs, newest first, one page at a time")
    def get_runs(
        self, graph: NamedDependency[Graph],
        offset: Annotated[int, Parameter(ge=0, le=MAX_RUNS_OFFSET)] = 0,
        limit: Annotated[int, Parameter(ge=1, le=MAX_RUNS_PAGE)] = 20,
        kind: Annotated[str | None, Parameter(
            pattern=r"^[a-z_]{1,40}$",
            description="Only runs of this kind: search, idea, or a research tool's kind "
                        "(evolution, code_extract, ...)")] = None,
    ) -> RunList:
        return RunList.model_validate(list_runs(graph, offset, limit, kind))

    @get("/{run_id:str}", sync_to_thread=True,
         summary="A run: status, progress per stage, plan, counts, results with evidence")
    def get_run(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                registry: NamedDependency[RunRegistry]) -> RunView:
        return RunView.model_validate(describe_run(graph, run_id, registry.get(run_id)))

    @get("/{run_id:str}/graph", sync_to_thread=True,
         summary="A finished run's evidence graph: papers considered and edges with Delta")
    def get_evidence_graph(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                           registry: NamedDependency[RunRegistry]) -> EvidenceGraph:
        return EvidenceGraph.model_validate(
            weighed_graph(evidence_graph(graph, run_id, registry.get(run_id))))

    @post("/{run_id:str}/cancel", status_code=202, sync_to_thread=True,
          summary="Cancel a queued or running run (it stops before its next stage, or at once "
                  "while it waits on a model)")
    def cancel_run(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                   registry: NamedDependency[RunRegistry]) -> CancelAnswer:
        run = registry.cancel(run_id)
        if run is not None:
            return CancelAnswer(run_id=run.id, status=run.status, cancel_requested=True)
        record = read_run_record(graph, run_id)
        if record is None:
            raise RunNotFound(f"no run with id {run_id!r}")
        if record["status"] in FINISHED:
            raise RunNotCancellable(f"run {run_id} has already finished ({record['status']})")
        raise RunNotCancellable(f"run {run_id} is not run by this server (the command line's, "
                                "or one from before a restart); it cannot be cancelled here")

    @get("/{run_id:str}/export", sync_to_thread=True,
         summary="A finished run's results as JSON, CSV, BibTeX or RIS")
    def export_results(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                       registry: NamedDependency[RunRegistry],
                       format: Annotated[ExportFormat, Parameter(  # the query's own name
                           description="json, csv, bibtex or ris")] = ExportFormat.JSON,
                       related: Annotated[bool, Parameter(description=(
                           "a search's prior and derivative works too, after its results "
                           "(CSV, BibTeX, RIS; JSON always has them)"))] = False,
                       ) -> Response[str]:
        export = export_run(graph, run_id, registry.get(run_id), format, related)
        return Response(export.body, media_type=export.media_type, headers={
            "Content-Disposition": f'attachment; filename="{export.filename}"'})


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [RunController]
