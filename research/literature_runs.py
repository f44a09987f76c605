"""What the three literature runs (citation gaps, the evolution map, the benchmark
landscape) record alike: how they name their candidate search on the Run node, and the
whole report stored on the Run with RETURNED links to the papers it puts forward."""

from typing import Any

from pydantic import BaseModel

from crase.run_lifecycle import RunLifecycle, to_json

# How the runs name their candidate search on the Run node.
TEXT_RANKING = "bm25 fused with stored embeddings (bm25 alone where none are stored)"


def record_report(run: RunLifecycle, report: BaseModel, returned: list[dict[str, Any]]) -> None:
    """The whole report on the Run node (`report`, JSON) and RETURNED links to the papers
    it puts forward."""
    run.recorder.link("link_run_results", returned)
    run.recorder.graph.write("literature_set_run_report", id=run.run_id,
                             report=to_json(report.model_dump(mode="json")))
