"""Bad parameters end in one line saying what is wrong and what to do: on the command line
(exit code 2, no traceback), and over HTTP (400 or 422, never a 500).

The command-line cases fail before any database is reached: the database address points at
a closed port, so a case that got that far would say DatabaseUnavailable instead.
"""

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.cli import main
from crase.graph import Graph
from tests.recording_graph import RecordingGraph
from tests.sample_slice import load_sample_slice

QUERY = "tachyon condensation on unstable D-branes"
IDEA = "Tachyon condensation as the decay of unstable D-branes into closed strings"
CLOSED_BOLT = "bolt://127.0.0.1:9"


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CRASE_DATABASE__URI", CLOSED_BOLT)
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    return tmp_path


# (arguments, words the one line must hold)
BAD_COMMANDS: list[tuple[list[str], list[str]]] = [
    (["search", "*"], ["no word to search"]),
    (["search", ""], ["no word to search"]),
    (["search", "ab"], ["the query is too short", "at least 3"]),
    (["search", "     "], ["no word to search"]),
    (["search", "/.*/"], ["no word to search"]),
    (["search", "&& || !"], ["no word to search"]),
    (["search", "x" * 4001], ["query", "at most 4000"]),
    (["search", QUERY, "-k", "0"], ["-k 0", "1 to 1000"]),
    (["search", QUERY, "-k", "100000"], ["-k 100000", "1 to 1000"]),
    (["search", QUERY, "-k", "ten"], ["-k", "ten"]),
    (["search", QUERY, "-k", "1.5"], ["-k", "1.5"]),
    (["search", QUERY, "-k", "nan"], ["-k", "nan"]),
    (["search", QUERY, "--tau", "2"], ["--tau 2", "0 to 1"]),
    (["search", QUERY, "--tau", "nan"], ["--tau nan", "0 to 1"]),
    (["search", QUERY, "--tau=-inf"], ["--tau -inf", "0 to 1"]),
    (["search", QUERY, "--tau", "-inf"], ["--tau", "expected one argument"]),
    (["search", QUERY, "--tau", "0.5x"], ["--tau", "0.5x"]),
    (["search", QUERY, "--theta", "-1"], ["--theta -1", "0 to 1"]),
    (["search", QUERY, "--theta", "inf"], ["--theta inf", "0 to 1"]),
    (["search", QUERY, "--beta", "nan"], ["--beta nan", "0 to 10"]),
    (["search", QUERY, "--beta", "1e9"], ["--beta", "0 to 10"]),
    (["search", QUERY, "--query-seeds", "-1"], ["--query-seeds -1", "0 to 100"]),
    (["search", QUERY, "--query-seeds", "0"], ["no seed search", "--sub-queries above 0"]),
    (["search", QUERY, "--sub-queries", "1000"], ["--sub-queries 1000", "0 to 20"]),
    (["search", QUERY, "--seeds-per-query", "0"], ["--seeds-per-query 0", "1 to 100"]),
    (["search", QUERY, "--year", "1200"], ["--year 1200", "1900 to 2200"]),
    (["search", QUERY, "--year", "soon"], ["--year", "soon"]),
    (["search", QUERY, "--walk", "bogus"], ["--walk", "bogus"]),
    (["search"], ["query"]),
    (["search", QUERY, "-k", "0", "--tau", "5"], ["-k 0", "--tau 5"]),
    (["idea", "***"], ["no word to search"]),
    (["idea", ""], ["no word to search"]),
    (["idea", "x" * 8001], ["the idea is too long", "at most 8000"]),
    (["idea", IDEA, "--year-min", "100"], ["--year-min 100", "1600 to 2200"]),
    (["idea", IDEA, "--year-max", "3000"], ["--year-max 3000", "1600 to 2200"]),
    (["idea", IDEA, "--year-min", "nan"], ["--year-min", "nan"]),
    (["idea", IDEA, "--year-min", "2010", "--year-max", "2000"],
     ["--year-min 2010 is after --year-max 2000"]),
    (["idea", IDEA, "--pdf-dir", "/no/such/folder"], ["--pdf-dir", "not a folder"]),
    (["idea", IDEA, "--audit-out", "/no/such/folder/audit.json"], ["--audit-out", "folder"]),
    (["idea", IDEA, "--mode", "everything"], ["--mode", "everything"]),
    (["score", "--batch-size", "0"], ["--batch-size", "0"]),
    (["score", "--limit", "-5"], ["--limit", "-5"]),
    (["score", "--cache-size", "many"], ["--cache-size", "many"]),
]


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    for noise in ("Traceback", "pydantic", "ValidationError", "errors.pydantic.dev",
                  "DatabaseUnavailable", "usage:"):
        assert noise not in err, err
    assert err.startswith("crase: ") and "; " in err, err
    return err


def case_id(argv: list[str]) -> str:
    """The command and what is bad about it, short: `search -k 0`, `search '/.*/'`."""
    query = repr(argv[1][:12]) if len(argv) > 1 and argv[1] not in (QUERY, IDEA) else ""
    return " ".join([argv[0], query, *argv[2:]]).replace("  ", " ").strip()


@pytest.mark.parametrize("argv, words", BAD_COMMANDS, ids=[case_id(a) for a, _ in BAD_COMMANDS])
def test_a_bad_parameter_ends_in_one_line(argv: list[str], words: list[str], offline_env: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = one_line_error(capsys)
    for word in words:
        assert word in err, err


def test_no_run_is_recorded_for_a_query_without_words(
        offline_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "   "]) == 2
    one_line_error(capsys)
    assert not (offline_env / "var" / "runs").exists()


def test_a_bad_setting_in_the_environment_names_its_variable(
        offline_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRASE_SEARCH__MAX_ITERATIONS", "1000000000")
    assert main(["search", QUERY]) == 2
    err = one_line_error(capsys)
    assert "CRASE_SEARCH__MAX_ITERATIONS" in err and "1 to 1000" in err


@pytest.mark.integration
def test_a_search_without_seeds_says_why(graph: Graph, cli_env: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "zyxwvut qqqqqq"]) == 0
    err = capsys.readouterr().err
    assert "the graph holds no papers" in err and "crase load" in err

    load_sample_slice(graph, 30)
    assert main(["search", "zyxwvut qqqqqq", "--json"]) == 0
    err = capsys.readouterr().err
    assert "no paper matched the query's words" in err and "other words" in err


@pytest.mark.parametrize("params, field", [
    ({"max_iterations": 1_000_000_000}, "max_iterations"),
    ({"k": 5000}, "k"),
    ({"tolerance": 0}, "tolerance"),
    ({"beta": 1e9}, "beta"),
    ({"seed_pool": 10**9}, "seed_pool"),
])
def test_an_out_of_range_search_parameter_is_a_400(recording_client: TestClient,
                                                   recording_graph: RecordingGraph,
                                                   params: dict[str, Any], field: str) -> None:
    response = recording_client.post("/searches", json={"query": QUERY, "params": params})
    assert response.status_code == 400, response.text
    assert field in response.json()["detail"]
    assert "create_run" not in recording_graph.names()


def test_an_out_of_range_idea_parameter_is_a_400(recording_client: TestClient,
                                                 recording_graph: RecordingGraph) -> None:
    response = recording_client.post("/ideas", json={"idea": IDEA,
                                                     "params": {"neighbour_read_limit": 10**9}})
    assert response.status_code == 400, response.text
    assert "neighbour_read_limit" in response.json()["detail"]
    assert "create_run" not in recording_graph.names()


def test_a_search_body_without_a_word_is_refused_before_any_run(
        recording_client: TestClient, recording_graph: RecordingGraph) -> None:
    response = recording_client.post("/searches", json={"query": "   /.*/  "})
    assert response.status_code == 422 and "no word" in response.json()["detail"]
    assert recording_graph.names() == []  # nothing was sent: no Run was created


def test_params_that_leave_a_search_without_seeds_are_an_invalid_request() -> None:
    # In range alone, but on a server whose defaults seed by plan only, `sub_queries: 0`
    # leaves the search no seed source: a named error (422), not a 500.
    from crase.api.routes.searches import SearchBody, SearchParams, build_request
    from crase.errors import InvalidRequest
    from crase.settings import SearchSettings

    body = SearchBody(query=QUERY, params=SearchParams.model_validate({"sub_queries": 0}))
    with pytest.raises(InvalidRequest, match="no seed search"):
        build_request(body, SearchSettings(query_seeds=0, sub_queries=2))
