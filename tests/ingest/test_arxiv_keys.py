"""arXiv ids are stored as their comparison key at ingest: no version, no `arXiv:` prefix,
and taken from an arXiv DOI where no arXiv id is given, so one work has one spelling."""

import pytest

from crase.ingest.records import Paper


@pytest.mark.parametrize(("given", "stored"), [
    ("arXiv:hep-th/9901001v2", "hep-th/9901001"),
    ("hep-th/9901001", "hep-th/9901001"),
    ("2101.01234v3", "2101.01234"),
    ("https://arxiv.org/abs/2101.01234v1", "2101.01234"),
])
def test_an_arxiv_id_is_stored_as_its_key(given: str, stored: str) -> None:
    assert Paper.model_validate({"id": "p", "title": "T", "arxiv_id": given}).arxiv_id == stored


def test_an_arxiv_doi_gives_the_arxiv_id() -> None:
    paper = Paper.model_validate({"id": "p", "title": "T",
                                  "doi": "https://doi.org/10.48550/arXiv.2101.01234"})
    assert paper.arxiv_id == "2101.01234" and paper.doi == "10.48550/arxiv.2101.01234"
    publisher = Paper.model_validate({"id": "p", "title": "T", "doi": "10.1103/X.80.1"})
    assert publisher.arxiv_id is None
