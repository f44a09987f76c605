"""The runs list that GET /runs, `crase runs` and the runs page read: newest first, paged."""

import pytest

from crase.api.run_views import list_runs
from crase.graph import Graph

pytestmark = pytest.mark.integration


def open_run(graph: Graph, run_id: str, kind: str, started: str) -> None:
    graph.write("create_run", id=run_id, kind=kind, query=f"query of {run_id}", params="{}",
                started=started, backends="{}")


def test_runs_come_newest_first_in_pages_and_by_kind(graph: Graph) -> None:
    for day, kind in zip(range(1, 6), ["search", "idea", "search", "search", "idea"],
                         strict=True):
        open_run(graph, f"run-{day}", kind, f"2026-11-0{day}T10:00:00Z")
    first = list_runs(graph, offset=0, limit=2)
    assert first["total"] == 5
    assert [run["id"] for run in first["runs"]] == ["run-5", "run-4"]
    assert [run["id"] for run in list_runs(graph, offset=4, limit=2)["runs"]] == ["run-1"]
    ideas = list_runs(graph, kind="idea")
    assert (ideas["total"], [run["id"] for run in ideas["runs"]]) == (2, ["run-5", "run-2"])
    assert first["runs"][0]["status"] == "running" and first["runs"][0]["results"] == 0
