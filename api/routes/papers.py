"""Papers: one by id (with pages of its references and citing papers), full-text search,
and loading a batch of papers and citations. The GET answers are typed (the models below),
so the OpenAPI schema says what each field holds."""

from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, Parameter
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from crase.api.batch_loads import load_batch
from crase.api.routes.runs import LINKS_DESCRIPTION
from crase.api.run_views import shown_paper
from crase.errors import InvalidRequest, PaperNotFound
from crase.graph import Graph
from crase.ingest.records import MAX_ID_CHARS
from crase.search.text_ranking import escape_lucene
from crase.settings import Settings


class CitationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Commas, quotes and line breaks cannot stand in the corpus edge format; everything
    # else about an edge (too long an id, self-citation, unknown paper, repeat) is the
    # loader's to judge, as one reject among the rows that load.
    citing_id: str = Field(pattern=r'^[^,"\r\n]*$')
    cited_id: str = Field(pattern=r'^[^,"\r\n]*$')


class PaperBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    papers: list[Any] = Field(
        default_factory=list,
        description="Paper objects: id, title, abstract, year, authors, venue, arxiv_id, "
                    "doi, ... (the corpus papers.jsonl format); each is checked on its own. "
                    "Identifiers (id, doi, arxiv_id, s2_id, and citation ends) may have up to "
                    f"{MAX_ID_CHARS:,} characters; a longer one is an `id_too_long` reject")
    citations: list[CitationIn] = Field(default_factory=list)

    @model_validator(mode="after")
    def refuse_an_empty_batch(self) -> "PaperBatch":
        if not self.papers and not self.citations:
            raise PydanticCustomError(
                "empty_batch", "the batch has no papers and no citations; send at least one "
                "paper or citation")
        return self


MAX_LIST_PAGE = 200
MAX_LIST_OFFSET = 100_000


class PaperHit(BaseModel):
    id: str
    title: str | None
    year: int | None
    authors: list[str]
    arxiv_id: str | None = None
    doi: str | None = None
    score: float = Field(description="Lucene relevance")
    links: dict[str, str] = Field(description=LINKS_DESCRIPTION)


class PaperSearchPage(BaseModel):
    q: str
    offset: int
    limit: int
    results: list[PaperHit] = Field(description="Best first")


class LinkedPaper(BaseModel):
    id: str
    title: str | None
    year: int | None
    links: dict[str, str] = Field(description=LINKS_DESCRIPTION)


class PaperList(BaseModel):
    total: int = Field(description="All of them, every page")
    offset: int
    limit: int
    papers: list[LinkedPaper] = Field(description="Newest first")


class PaperClaim(BaseModel):
    extractor: str | None
    rank: int | None
    text: str | None
    type: str | None
    source_phrase: str | None


class PaperView(BaseModel):
    id: str
    title: str | None
    abstract: str | None
    year: int | None
    venue: str | None
    authors: list[str]
    arxiv_id: str | None
    doi: str | None
    s2_id: str | None
    categories: list[str] | None
    journal_ref: str | None
    date: str | None
    links: dict[str, str] = Field(description=LINKS_DESCRIPTION)
    references: int = Field(description="How many papers it cites")
    cited_by: int = Field(description="How many papers cite it")
    references_page: PaperList = Field(description="A page of the papers it cites")
    cited_by_page: PaperList = Field(description="A page of the papers that cite it")
    claims: list[PaperClaim]


def paper_list(graph: Graph, query: str, paper_id: str, total: int, offset: int,
               limit: int) -> PaperList:
    rows = graph.read(query, id=paper_id, skip=offset, limit=limit) if offset < total else []
    return PaperList(total=total, offset=offset, limit=limit,
                     papers=[LinkedPaper.model_validate(shown_paper(row)) for row in rows])


def body_too_deep(_: Request[Any, Any, Any], error: RecursionError) -> Response[Any]:
    """The body's JSON decoder recurses per level and gives up near 1,000: a 400 in the
    shape of every other validation failure, instead of a 500."""
    message = ("the JSON body is nested too deeply to parse (more than about 1,000 levels); "
               "send each paper as a flat object")
    return Response({"status_code": 400, "error": "ValidationFailed", "detail": f"body: {message}",
                     "errors": [{"field": "body", "message": message, "source": "body"}]},
                    status_code=400)


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
    ) -> PaperSearchPage:
        text = escape_lucene(q)
        if not text:
            raise InvalidRequest("q: no searchable words")
        rows = graph.read("search_papers_page", query=text, skip=offset, limit=limit)
        return PaperSearchPage(q=q, offset=offset, limit=limit,
                               results=[PaperHit.model_validate(shown_paper(row))
                                        for row in rows])

    @get("/{paper_id:path}", sync_to_thread=True,
         summary="One paper with its links, claims, and a page each of the papers it cites "
                 "and of those that cite it")
    def get_paper(
        self, paper_id: FromPath[str], graph: NamedDependency[Graph],
        limit: Annotated[int, Parameter(
            ge=1, le=MAX_LIST_PAGE, description="Papers per page of references and of "
                                                "citing papers")] = 20,
        offset: Annotated[int, Parameter(
            ge=0, le=MAX_LIST_OFFSET, description="Where both pages start")] = 0,
    ) -> PaperView:
        paper_id = paper_id.lstrip("/")
        rows = graph.read("read_paper", id=paper_id)
        if not rows:
            raise PaperNotFound(f"no paper with id {paper_id!r}")
        paper = shown_paper(rows[0])
        paper["references_page"] = paper_list(graph, "read_paper_references", paper_id,
                                              paper["references"], offset, limit)
        paper["cited_by_page"] = paper_list(graph, "read_paper_citing", paper_id,
                                            paper["cited_by"], offset, limit)
        return PaperView.model_validate(paper)

    # Only the body's decoding can recurse that deep here: the loader turns a row too deep
    # for its own parser into a `too_deep` reject.
    @post("/batch", status_code=200, sync_to_thread=True,
          exception_handlers={RecursionError: body_too_deep},
          summary="Load papers and citations; returns counts and every reject with its reason")
    def load_papers(self, data: JSONBody[PaperBatch], graph: NamedDependency[Graph],
                    settings: NamedDependency[Settings]) -> dict[str, Any]:
        rows = len(data.papers) + len(data.citations)
        if rows > settings.api.ingest_max_rows:
            raise InvalidRequest(f"papers + citations: {rows} rows, more than the "
                                 f"{settings.api.ingest_max_rows} one request may carry")
        edges = [(c.citing_id, c.cited_id) for c in data.citations]
        return load_batch(graph, settings, data.papers, edges).as_json()


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [PaperController]
