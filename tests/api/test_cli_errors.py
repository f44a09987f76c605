"""What a new user sees when something is wrong: one line on stderr that says what and
what to do next, and the exit code. A wrong flag is answered by the command it was given
to; a wrong password says authentication failed; a closed port is reported at once."""

import time
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.settings import DatabaseSettings
from tests.conftest import free_port
from tests.sample_slice import load_sample_slice


def crase_lines(err: str) -> list[str]:
    """The lines the command itself wrote as its message (after 'Using ...' notes)."""
    assert "Traceback" not in err and "pydantic" not in err, err
    return [line for line in err.splitlines() if line.startswith("crase: ")]


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    _, err = capsys.readouterr()
    lines = crase_lines(err)
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def closed_port(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    uri = f"bolt://127.0.0.1:{free_port()}"
    monkeypatch.setenv("CRASE_DATABASE__URI", uri)
    monkeypatch.setenv("CRASE_DATABASE__PASSWORD", "unused")
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    return uri


def test_an_empty_query_names_the_query_and_what_to_give(
        closed_port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", ""]) == 2
    line = one_line(capsys)
    assert "the query has no word" in line and 'crase search "' in line


def test_tau_out_of_range_names_the_flag_and_its_range(
        closed_port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "tachyon", "--tau", "2"]) == 2
    assert one_line(capsys) == ("crase: InvalidRequest: --tau 2: out of range; give a number "
                                "from 0 to 1")


def test_a_wrong_flag_gets_the_search_commands_hint(
        closed_port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "tachyon", "--k", "5"]) == 2
    line = one_line(capsys)
    assert line == ("crase: InvalidRequest: unrecognized arguments: --k 5 (did you mean -k?); "
                    "crase search takes query [options]; see `crase search --help`")


def test_a_wrong_flag_of_a_nested_command_names_that_command(
        closed_port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--force"]) == 2
    line = one_line(capsys)
    assert "unrecognized arguments: --force" in line and "`crase db init --help`" in line


def test_a_closed_port_is_reported_at_once(closed_port: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    assert main(["db", "init"]) == 2
    elapsed = time.monotonic() - started
    line = one_line(capsys)
    assert line.startswith(f"crase: DatabaseUnavailable: Neo4j is not reachable at "
                           f"{closed_port}")
    assert "Connection refused" in line and "crase db start" in line
    assert elapsed < 10.0  # the driver's transaction retries would take 30 s and more


@pytest.mark.integration
def test_a_wrong_password_says_authentication_failed(
        graph: Graph, cli_env: Path, database_settings: DatabaseSettings,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRASE_DATABASE__PASSWORD", "not-the-password")
    assert main(["idea-audit", "no-such-run"]) == 2
    line = one_line(capsys)
    assert line.startswith("crase: DatabaseAuthFailed: Neo4j at "
                           f"{database_settings.bolt_uri()} refused the login")
    assert "authentication failed" in line and "CRASE_DATABASE__PASSWORD" in line
    assert "not reachable" not in line and "crase db start`," not in line


@pytest.mark.integration
def test_a_query_that_matches_nothing_says_what_to_try(
        graph: Graph, cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    load_sample_slice(graph, 30)
    assert main(["search", "zyxwvut qqqqqq"]) == 0
    line = one_line(capsys)
    assert line.startswith("crase: no seeds: no paper matched the query's words; try ")
    assert "other words" in line and "crase embed" in line and "crase load DIR" in line
