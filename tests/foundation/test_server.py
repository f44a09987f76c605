"""The self-started Neo4j + GDS + Browser server answers as the architecture note says."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from crase.database import Neo4jServer, generate_password
from crase.graph import Graph
from crase.settings import DatabaseSettings
from tests.conftest import free_port

pytestmark = pytest.mark.integration


def test_gds_answers(graph: Graph) -> None:
    with graph.driver.session() as session:
        version = session.run("RETURN gds.version() AS v").single()["v"]
    assert version.startswith("2.13.")


def test_browser_page_is_served(database_settings: DatabaseSettings) -> None:
    if database_settings.uri:
        pytest.skip("external server: its Browser is not ours to check")
    response = httpx.get(f"http://127.0.0.1:{database_settings.http_port}/browser/")
    assert response.status_code == 200
    assert "<title>Neo4j Browser</title>" in response.text


def test_wrong_password_is_refused(database_settings: DatabaseSettings) -> None:
    driver = GraphDatabase.driver(database_settings.bolt_uri(), auth=("neo4j", "not-the-password"))
    with driver, pytest.raises(AuthError):
        driver.verify_connectivity()


# 127.0.0.1 as /proc/net writes it (little-endian hex), plain and IPv4-mapped in IPv6, and ::1.
LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}


def listening_addresses(pid: int) -> set[str]:
    """Local addresses of the listening TCP sockets that belong to `pid`."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = str(fd.readlink()) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A = LISTEN
                addresses.add(fields[1].split(":")[0])
    return addresses


def test_listens_on_loopback_only(database_settings: DatabaseSettings) -> None:
    if database_settings.uri:
        pytest.skip("external server")
    pid = Neo4jServer(database_settings).status().pid
    assert pid is not None
    addresses = listening_addresses(pid)
    assert addresses, "the server should listen somewhere"
    assert addresses <= LOOPBACK, addresses


def test_second_start_reuses_the_running_server(database_settings: DatabaseSettings) -> None:
    if database_settings.uri:
        pytest.skip("external server")
    server = Neo4jServer(database_settings)
    before = server.status().pid
    after = server.start().pid
    assert before == after
    count = subprocess.run(["pgrep", "-f", str(database_settings.home)], capture_output=True,
                           text=True).stdout.split()
    assert len(count) == 1


# The GDS Python client runs in its own virtualenv (`make gds-client`, which `make test`
# builds): it pulls pandas, which the neo4j driver would import in every Crase command.
GDS_CLIENT_VENV = Path(__file__).parents[2] / "var" / "gds-client"
GDS_CLIENT_SCRIPT = Path(__file__).with_name("gds_client_pagerank.py")


def run_gds_client(uri: str, password: str) -> dict[str, Any]:
    """What tests/foundation/gds_client_pagerank.py prints, run by the client's interpreter."""
    if not (GDS_CLIENT_VENV / ".installed").is_file():
        pytest.fail(f"no GDS Python client in {GDS_CLIENT_VENV}: run `make gds-client`",
                    pytrace=False)
    done = subprocess.run([str(GDS_CLIENT_VENV / "bin" / "python"), str(GDS_CLIENT_SCRIPT), uri],
                          env={**os.environ, "NEO4J_PASSWORD": password}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_graphdatascience_client_runs_pagerank_over_bolt(graph: Graph,
                                                         database_settings: DatabaseSettings
                                                         ) -> None:
    with graph.driver.session() as session:
        session.run("UNWIND range(0, 3) AS i CREATE (:Paper {id: toString(i)})").consume()
        session.run("MATCH (a:Paper), (b:Paper) WHERE toInteger(a.id) + 1 = toInteger(b.id) "
                    "CREATE (a)-[:CITES]->(b)").consume()
    ran = run_gds_client(database_settings.bolt_uri(), database_settings.password or "")
    assert ran["projection"] == {"name": "client_check", "nodes": 4, "relationships": 3}
    assert len(ran["scores"]) == 4
    assert max(ran["scores"]) > min(ran["scores"])
    assert ran["dropped"] == ["client_check"]
    assert ran["exists_after_drop"] is False


@pytest.mark.integration
@pytest.mark.slow
def test_a_password_beginning_with_a_dash_sets_and_starts(tmp_path: Path) -> None:
    # neo4j-admin once read such a password as an option, and the home never started.
    settings = DatabaseSettings(home=tmp_path / "home", bolt_port=free_port(),
                                http_port=free_port(), password="-wz" + "x" * 20,
                                heap="512m", pagecache="64m")
    server = Neo4jServer(settings)
    try:
        server.start()
        with GraphDatabase.driver(settings.bolt_uri(), auth=("neo4j", settings.password)
                                  ) as driver:
            driver.verify_connectivity()
    finally:
        server.stop()


@pytest.mark.integration
def test_generated_passwords_never_look_like_an_option() -> None:
    assert not any(generate_password().startswith("-") for _ in range(2000))


def test_the_written_settings_limit_one_transactions_memory(tmp_path: Path) -> None:
    settings = DatabaseSettings(home=tmp_path / "home", transaction_memory="256m")
    conf = Neo4jServer(settings).write_conf().read_text().splitlines()
    assert "db.memory.transaction.max=256m" in conf
    assert "db.memory.transaction.max=512m" in Neo4jServer(DatabaseSettings(
        home=tmp_path / "other")).write_conf().read_text().splitlines()
    with pytest.raises(ValueError, match="transaction_memory"):
        DatabaseSettings(transaction_memory="lots")
