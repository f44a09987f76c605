"""Fixtures of the ingest tests."""

import gzip
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crase.database import Neo4jServer
from crase.graph import Graph
from crase.settings import DatabaseSettings
from tests.conftest import TEST_PASSWORD, clean_graph, free_port


@pytest.fixture(scope="session")
def bulk_import_server() -> Iterator[DatabaseSettings]:
    """A disposable server besides the session's, started once for every test that bulk
    imports (a start costs seconds; `crase db import` stops and restarts it anyway)."""
    home = Path(tempfile.mkdtemp(prefix="crase-neo4j-bulk-"))
    settings = DatabaseSettings(home=home, bolt_port=free_port(), http_port=free_port(),
                                password=TEST_PASSWORD, heap="512m", pagecache="128m")
    server = Neo4jServer(settings)
    server.start()
    try:
        yield settings
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def second_server(bulk_import_server: DatabaseSettings) -> DatabaseSettings:
    """The bulk-import server, running and empty for this test: a test that failed halfway
    through an import may have left it stopped, and any test left its graph behind (the
    next import replaces the database, but a `crase load` would add to it)."""
    server = Neo4jServer(bulk_import_server)
    if not server.status().running:
        server.start()
    with Graph.connect(bulk_import_server) as graph:
        clean_graph(graph)
    return bulk_import_server


def point_cli_at(server: DatabaseSettings, monkeypatch: pytest.MonkeyPatch,
                 tmp_path: Path) -> None:
    """The `crase` command line aimed at a self-managed second server (db import stops and
    starts it), with its own var_dir."""
    for name, value in {"HOME": server.home, "BOLT_PORT": server.bolt_port,
                        "HTTP_PORT": server.http_port, "PASSWORD": TEST_PASSWORD,
                        "HEAP": "512m", "PAGECACHE": "128m"}.items():
        monkeypatch.setenv(f"CRASE_DATABASE__{name}", str(value))
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))


FIXTURES = Path(__file__).parent / "fixtures"


def gzip_shards(source: Path, target: Path) -> Path:
    """The committed plain JSON-lines shards under `source`, gzipped as the publishers
    ship them (`part_000.jsonl` -> `part_000.gz`) into the same layout under `target`."""
    for plain in sorted(source.rglob("*.jsonl")):
        shard = target / plain.relative_to(source).with_suffix(".gz")
        shard.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(shard, "wb") as out:
            out.write(plain.read_bytes())
    return target


@pytest.fixture
def openalex_works(tmp_path: Path) -> Path:
    """The OpenAlex fixture snapshot's works folder, gzipped."""
    return gzip_shards(FIXTURES / "openalex" / "works", tmp_path / "openalex" / "works")


@pytest.fixture
def s2ag_datasets(tmp_path: Path) -> Path:
    """The Semantic Scholar fixture datasets (papers/, abstracts/, citations/), gzipped."""
    return gzip_shards(FIXTURES / "s2ag", tmp_path / "s2ag")
