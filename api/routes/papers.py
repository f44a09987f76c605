"""Papers: one by id, full-text search, and loading a batch of papers and citations."""

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, Parameter
from pydantic import BaseModel, ConfigDict, Field

from crase.api.batch_loads import load_batch
from crase.errors import InvalidRequest, PaperNotFound
from crase.graph import Graph
from crase.search.text_ranking import escape_lucene
from crase.settings import Settings


class CitationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Commas, quotes and line breaks cannot stand in the corpus edge format; everything
    # else about an edge (self-citation, unknown paper, repeat) is the loader's to judge.
    citing_id: str = Field(max_length=1000, pattern=r'^[^,"\r\n]*$')
    cited_id: str = Field(max_length=1000, pattern=r'^[^,"\r\n]*$')


class PaperBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    papers: list[Any] = Field(
        default_factory=list,
        description="Paper objects: id, title, abstract, year, authors, venue, arxiv_id, "
                    "doi, ... (the corpus papers.jsonl format); each is checked on its own")
    citations: list[CitationIn] = Field(default_factory=list)


class PaperController(Controller):
    path = "/papers"
    tags = ["papers"]

    @get("/", sync_to_thread=True, summary="Full-text search over titles and abstracts")
    def search_papers(
        self, graph: NamedDependency[Graph],
        q: Annotated[str, Parameter(min_length=1, max_length=500,
                                    description="Words to look for (plain words)")],
        limit: Annotated[int, Parameter(ge=1, le=200)] = 20,
        offset: Annotated[int, Parameter(ge=0, le=10_000)] = 0,
    ) -> dict[str, Any]:
        text = escape_lucene(q)
        if not text:
            raise InvalidRequest("q: no searchable words")
        rows = graph.read("search_papers_page", query=text, skip=offset, limit=limit)
        return {"q": q, "offset": offset, "limit": limit,
                "results": [{**row, "authors": row["authors"] or []} for row in rows]}

    @get("/{paper_id:path}", sync_to_thread=True,
         summary="One paper with its citation counts and claims")
    def get_paper(self, paper_id: FromPath[str], graph: NamedDependency[Graph]) -> dict[str, Any]:
        paper_id = paper_id.lstrip("/")
        rows = graph.read("read_paper", id=paper_id)
        if not rows:
            raise PaperNotFound(f"no paper with id {paper_id!r}")
        return rows[0]

    @post("/batch", status_code=200, sync_to_thread=True,
          summary="Load papers and citations; returns counts and every reject with its reason")
    def load_papers(self, data: JSONBody[PaperBatch], graph: NamedDependency[Graph],
                    settings: NamedDependency[Settings]) -> dict[str, Any]:
        rows = len(data.papers) + len(data.citations)
        if rows > settings.api.ingest_max_rows:
            raise InvalidRequest(f"papers + citations: {rows} rows, more than the "
                                 f"{settings.api.ingest_max_rows} one request may carry")
        edges = [(c.citing_id, c.cited_id) for c in data.citations]
        return load_batch(graph, settings, data.papers, edges).as_json()
