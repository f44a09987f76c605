"""Papers read over HTTP from the shared corpus: by id with the pages of its references and
citing papers, and the full-text search with its paging, whatever text it is given."""

from typing import Any

import pytest
from litestar.testing import TestClient

pytestmark = pytest.mark.integration


def test_paper_pages_its_references_and_citing_papers(client: TestClient,
                                                     corpus: dict[str, Any]) -> None:
    paper = client.get("/papers/tachyon-04", params={"limit": 2}).json()
    assert paper["links"] == {"arxiv": f"https://arxiv.org/abs/{paper['arxiv_id']}"}
    assert (paper["references"], paper["cited_by"]) == (2, 3)
    references = paper["references_page"]
    assert (references["total"], references["offset"], references["limit"]) == (2, 0, 2)
    assert [p["id"] for p in references["papers"]] == ["tachyon-03", "tachyon-02"]
    first = references["papers"][0]
    assert first == {"id": "tachyon-03", "title": "Tachyon condensation on unstable D-branes, "
                     "part 4", "year": 1997, "links": {"arxiv": "https://arxiv.org/abs/"
                                                                "hep-th/9400307"}}
    citing = paper["cited_by_page"]
    assert citing["total"] == 3
    assert [p["id"] for p in citing["papers"]] == ["holography-10", "tachyon-06"]
    rest = client.get("/papers/tachyon-04", params={"limit": 2, "offset": 2}).json()
    assert [p["id"] for p in rest["cited_by_page"]["papers"]] == ["tachyon-05"]
    assert rest["references_page"] == {"total": 2, "offset": 2, "limit": 2, "papers": []}
    for bad in ({"limit": 0}, {"limit": 201}, {"offset": -1}, {"offset": 100_001}):
        response = client.get("/papers/tachyon-04", params=bad)
        assert response.status_code == 400
        assert response.json()["errors"][0]["field"] == next(iter(bad))


def test_full_text_search_pages(client: TestClient, corpus: dict[str, Any]) -> None:
    query = "Hawking radiation black hole"
    top = client.get("/papers", params={"q": query, "limit": 10}).json()["results"]
    first = client.get("/papers", params={"q": query, "limit": 5})
    assert first.status_code == 200
    hits = first.json()["results"]
    assert len(hits) == 5 and all(hit["id"].startswith("entropy") for hit in hits)
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    second = client.get("/papers", params={"q": query, "limit": 5,
                                           "offset": 5}).json()["results"]
    # The two pages are the top ten, each paper once (the index's own skip option once
    # gave a paper on both pages after the corpus had been rewritten).
    assert not {h["id"] for h in hits} & {h["id"] for h in second}
    assert {h["id"] for h in hits + second} == {h["id"] for h in top}
    # Lucene syntax is searched as plain words, never parsed.
    odd = client.get("/papers", params={"q": 'black AND "hole OR (x'})
    assert odd.status_code == 200 and odd.json()["results"]


@pytest.mark.parametrize("q", ["AND", "NOT", "OR", "black OR", "AND NOT x", "&&", "||",
                               "x &&", "Black AND hole", "(", '"', "***", "/.*/"])
def test_paper_search_takes_any_text_as_words(client: TestClient, corpus: dict[str, Any],
                                              q: str) -> None:
    response = client.get("/papers", params={"q": q})
    assert response.status_code == 200, response.text
    hits = response.json()["results"]
    if q in ("***", "/.*/", "&&", "||"):
        assert hits == []
    if q in ("black OR", "Black AND hole"):
        assert hits and all(hit["id"].startswith("entropy") for hit in hits[:5])
