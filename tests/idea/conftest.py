"""Fixtures for the idea workflow: the encoder (its vectors cached for the session), the
offline backends, and the fixture corpus in the test database."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from crase.graph import Graph
from crase.idea.roles.offline_assessor import OfflineAssessor
from crase.idea.roles.offline_expert import OfflineExpert
from crase.idea.roles.offline_report import OfflineReporter
from crase.idea.roles.offline_structure import OfflineRecaller, OfflineStructurer
from crase.idea.roles.protocols import IdeaBackends
from crase.models.embedding_cache import CachedEncoder
from crase.models.minilm import NumpyBertEncoder
from tests.idea.corpus import TOPIC, load_fixture_corpus
from tests.idea.pdfs import make_pdf, paper_pages


@pytest.fixture(scope="session")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> CachedEncoder:
    return CachedEncoder(NumpyBertEncoder(), tmp_path_factory.mktemp("embedding-cache"))


@pytest.fixture
def offline_backends(encoder: CachedEncoder, tmp_path: Path) -> IdeaBackends:
    assessor = OfflineAssessor(encoder)
    return IdeaBackends(
        structurer=OfflineStructurer(), recaller=OfflineRecaller(), assessor=assessor,
        neighbour_scorer=assessor, expert=OfflineExpert(encoder), reporter=OfflineReporter(),
        providers=None, runs_dir=tmp_path / "runs")


@pytest.fixture
def corpus(graph: Graph) -> Iterator[Graph]:
    load_fixture_corpus(graph)
    yield graph


@pytest.fixture(scope="session")
def pdf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PDF for every fixture paper, named by its id."""
    folder = tmp_path_factory.mktemp("pdfs")
    for pid, *_ in TOPIC:
        make_pdf(folder / f"{pid}.pdf", paper_pages())
    return folder
