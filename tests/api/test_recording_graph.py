"""The recording graph the server-free API tests run on (tests/recording_graph.py): it keeps
every call, answers from its canned rows only, and fails where the real graph would fail or
where a test would need the real database."""

import pytest

from crase.errors import DatabaseError, QueryNotFound
from tests.recording_graph import Call, DriverSessionRefused, RecordingGraph


def test_calls_are_kept_in_order_with_their_parameters() -> None:
    graph = RecordingGraph()
    graph.read("read_run", id="r1")
    graph.write("finish_run", id="r1", status="done")
    graph.write_all([("mark_run_alive", {"id": "r1", "owner": "o"})])
    assert graph.calls == [Call("read", "read_run", {"id": "r1"}),
                           Call("write", "finish_run", {"id": "r1", "status": "done"}),
                           Call("write", "mark_run_alive", {"id": "r1", "owner": "o"})]
    assert graph.names() == ["read_run", "finish_run", "mark_run_alive"]
    assert graph.sent("read_run") == [{"id": "r1"}]
    assert [call.name for call in graph.writes()] == ["finish_run", "mark_run_alive"]


def test_answers_are_canned_rows_copied_computed_or_raised() -> None:
    rows = [{"id": "p1", "authors": ["A"]}]
    graph = RecordingGraph({"read_paper": rows,
                            "read_papers": lambda params: [{"id": i} for i in params["ids"]],
                            "read_run": DatabaseError("query read_run failed")})
    first = graph.read("read_paper", id="p1")
    first[0]["authors"].append("changed by the caller")
    assert graph.read("read_paper", id="p1") == [{"id": "p1", "authors": ["A"]}]
    assert graph.read("read_papers", ids=["a", "b"]) == [{"id": "a"}, {"id": "b"}]
    with pytest.raises(DatabaseError, match="read_run"):
        graph.read("read_run", id="x")
    assert graph.read("read_run_seeds", run_id="x") == []  # no rows canned: none answered


def test_an_unknown_query_name_fails_as_with_the_real_graph() -> None:
    graph = RecordingGraph()
    with pytest.raises(QueryNotFound, match="no_such_query"):
        graph.read("no_such_query")
    assert graph.calls == []


def test_a_session_asked_of_its_driver_is_refused_and_counted() -> None:
    graph = RecordingGraph()
    graph.driver.verify_connectivity()
    with pytest.raises(DriverSessionRefused, match="real database"):
        graph.driver.session(database=graph.database)
    assert (graph.recording_driver.connectivity_checks,
            graph.recording_driver.sessions_asked) == (1, 1)
