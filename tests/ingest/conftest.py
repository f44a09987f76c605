"""Fixtures of the ingest tests."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crase.database import Neo4jServer
from crase.settings import DatabaseSettings
from tests.conftest import TEST_PASSWORD, free_port


@pytest.fixture
def second_server() -> Iterator[DatabaseSettings]:
    """A disposable server of its own: the import stops and restarts it."""
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
