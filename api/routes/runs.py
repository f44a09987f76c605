"""GET /runs/{id} and what hangs off a run: its evidence graph, cancellation, exports."""

from typing import Annotated, Any

from litestar import Controller, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, Parameter

from crase.api.exports import ExportFormat, export_run
from crase.api.run_views import describe_run, evidence_graph, read_run_record
from crase.api.runs import FINISHED, RunRegistry
from crase.errors import RunNotCancellable, RunNotFound
from crase.graph import Graph


class RunController(Controller):
    path = "/runs"
    tags = ["runs"]

    @get("/{run_id:str}", sync_to_thread=True,
         summary="A run: status, progress per stage, plan, counts, results with evidence")
    def get_run(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                registry: NamedDependency[RunRegistry]) -> dict[str, Any]:
        return describe_run(graph, run_id, registry.get(run_id))

    @get("/{run_id:str}/graph", sync_to_thread=True,
         summary="A finished run's evidence graph: papers considered and edges with Delta")
    def get_evidence_graph(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                           registry: NamedDependency[RunRegistry]) -> dict[str, Any]:
        return evidence_graph(graph, run_id, registry.get(run_id))

    @post("/{run_id:str}/cancel", status_code=202, sync_to_thread=True,
          summary="Cancel a queued or running run (it stops before its next stage, or at once "
                  "while it waits on a model)")
    def cancel_run(self, run_id: FromPath[str], graph: NamedDependency[Graph],
                   registry: NamedDependency[RunRegistry]) -> dict[str, Any]:
        run = registry.cancel(run_id)
        if run is not None:
            return {"run_id": run.id, "status": run.status, "cancel_requested": True}
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
                       ) -> Response[str]:
        export = export_run(graph, run_id, registry.get(run_id), format)
        return Response(export.body, media_type=export.media_type, headers={
            "Content-Disposition": f'attachment; filename="{export.filename}"'})


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [RunController]
