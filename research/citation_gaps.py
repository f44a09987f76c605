"""Citation-gap analysis of a draft: given an excerpt and the references it already has
(BibTeX entries or paper ids), the corpus papers it plausibly should cite, each with the
passage of the draft it fits and why.

Also the home of what the three literature runs share: reference lists (BibTeX, CSV or
JSON read into ReferenceItems and resolved to corpus papers by id, DOI, arXiv id, then
title; the evolution map's comparison uses them too) and `record_report`, which stores a
run's report on its Run node.

How a gap is found (offline path, always run):
- the draft is cut into passages of a few sentences;
- candidates: each passage's own text ranking (BM25 and embeddings fused), and papers
  linked by citation to at least two of the draft's resolved references, at most
  `max_candidates` in all; papers already cited are left out;
- evidence: each candidate's abstract sentences and stored claims, embedded with MiniLM;
  the passage a candidate fits is the one with the highest cosine to any of its sentences,
  and that sentence is the evidence shown;
- score: that cosine, plus REFERENCE_BONUS for each resolved reference it is linked to (at
  most MAX_REFERENCE_LINKS); a candidate below `min_similarity` is dropped.
Model path (with an assessor endpoint): each kept candidate's abstract is graded against
the passage it fits (prompt assess_abstract); grades 0 and 1 are dropped and the model's
notes are the reason. Without an endpoint the offline path's reasons stand and the result
says so.
"""

import csv
import io
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from crase.errors import InvalidRequest
from crase.graph import Graph
from crase.idea.roles.model_calls import IdeaFacets, IdeaPaper, assess_abstracts
from crase.models.chat import ModelReply, ModelRunner
from crase.paper_identity import normalise_arxiv_id, normalise_doi, title_similarity
from crase.research.bibtex import MAX_BIBTEX_CHARS, read_bibtex
from crase.research.text_limits import check_text_size
from crase.run_lifecycle import SILENT, RunLifecycle, RunObserver, to_json
from crase.scoring.tex import plain_text
from crase.search.roles.offline_claims import OfflineClaimExtractor, split_sentences
from crase.search.text_ranking import Encoder, has_searchable_word, query_hits, search_hits
from crase.settings import ModelEndpoint, ModelSettings

STAGES = ("references", "candidates", "evidence", "assess", "record")
TITLE_MATCH = 0.8  # word-set Jaccard at which two titles are the same paper
REFERENCE_BONUS = 0.05
MAX_REFERENCE_LINKS = 3
MIN_REFERENCE_LINKS = 2  # a citation-route candidate is linked to this many references
NEIGHBOURS_PER_REFERENCE = 200
# How the runs name their candidate search on the Run node.
TEXT_RANKING = "bm25 fused with stored embeddings (bm25 alone where none are stored)"


class ReferenceItem(BaseModel):
    """One reference: any of an id, a DOI, an arXiv id, a title (with year and authors)."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = Field(None, max_length=1000, description="Citation key, list position")
    id: str | None = Field(None, min_length=1, max_length=1000, description="Corpus paper id")
    title: str | None = Field(None, min_length=1, max_length=2000)
    year: int | None = Field(None, ge=1600, le=2200)
    doi: str | None = Field(None, min_length=1, max_length=1000)
    arxiv_id: str | None = Field(None, min_length=1, max_length=1000)
    authors: list[str] = Field(default_factory=list, max_length=1000)

    @model_validator(mode="after")
    def names_a_paper(self) -> "ReferenceItem":
        if not (self.id or self.title or self.doi or self.arxiv_id):
            raise ValueError("a reference needs an id, a title, a doi or an arxiv_id")
        return self


class ResolvedReference(BaseModel):
    reference: ReferenceItem
    paper_id: str | None = Field(description="The corpus paper, or null when none matches")
    matched_by: str | None = Field(description="id, doi, arxiv_id or title")
    title: str | None = Field(description="The corpus paper's title")


# A cited id becomes a ReferenceItem id, so it takes that field's bounds (an empty one was
# a server error) and must hold a character that is not a space.
CorpusId = Annotated[str, Field(min_length=1, max_length=1000, pattern=r"\S",
                                description="A corpus paper id")]


class GapRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    draft: str = Field(min_length=1, max_length=20_000, description="The draft excerpt")
    bibtex: str | None = Field(None, max_length=MAX_BIBTEX_CHARS,
                               description="The draft's references as BibTeX entries")
    cited_ids: list[CorpusId] = Field(default_factory=list, max_length=5000,
                                      description="Corpus ids of papers the draft already "
                                                  "cites")
    limit: int = Field(10, ge=1, le=100, description="Most suggestions returned")
    pool: int = Field(20, ge=1, le=100, description="Text hits read per passage")
    max_candidates: int = Field(200, ge=1, le=1000,
                                description="Most candidates whose sentences are embedded")
    passage_sentences: int = Field(2, ge=1, le=20, description="Sentences per passage")
    min_similarity: float = Field(0.35, ge=-1.0, le=1.0,
                                  description="Least cosine between a passage and evidence")


class Passage(BaseModel):
    index: int
    start: int = Field(description="Character offset in the draft")
    text: str


class GapSuggestion(BaseModel):
    rank: int
    paper_id: str
    title: str
    year: int | None
    passage: int = Field(description="Index of the passage it fits")
    passage_text: str
    evidence: str = Field(description="The abstract sentence or claim closest to the passage")
    evidence_kind: str = Field(description="'abstract' or 'claim'")
    similarity: float
    reference_links: list[str] = Field(description="Draft references it cites or is cited by")
    routes: list[str] = Field(description="'text' (the passage's ranking), 'citation'")
    score: float
    why: str
    grade: int | None = Field(description="The model's grade 0-3, when a model assessed it")


class GapReport(BaseModel):
    run_id: str
    passages: list[Passage]
    references: list[ResolvedReference]
    suggestions: list[GapSuggestion]
    assessment: str = Field(description="What graded the suggestions: model or offline")
    counts: dict[str, int]
    backends: dict[str, str]
    timings: dict[str, float]


@dataclass
class Candidate:
    paper_id: str
    routes: set[str]
    links: list[str]


# --- reference lists ---------------------------------------------------------------------


def parse_bibtex(text: str) -> list[ReferenceItem]:
    """The entries of a BibTeX text (crase.research.bibtex: @string macros and `#`
    concatenation resolved, size and CPU bounded) that name a paper: title, year, doi,
    eprint/arxiv, author, key. @comment, @string and @preamble are no entries."""
    items = []
    for entry in read_bibtex(text):
        item = reference_from_fields(entry.key, entry.fields)
        if item is not None:
            items.append(item)
    return items


def reference_from_fields(key: str | None, fields: dict[str, str]) -> ReferenceItem | None:
    arxiv = fields.get("eprint") or fields.get("arxiv")
    year = fields.get("year", "")
    authors = [a.strip() for a in fields.get("author", "").split(" and ") if a.strip()]
    try:
        return ReferenceItem(key=key, title=fields.get("title") or None,
                             year=int(year) if year.isdigit() else None,
                             doi=fields.get("doi") or None, arxiv_id=arxiv or None,
                             authors=authors)
    except ValidationError:
        return None  # an entry with neither title nor identifier names no paper


def read_reference_list(text: str) -> list[ReferenceItem]:
    """A reference list as BibTeX, a JSON list of objects, or CSV with a header naming
    title / year / doi / arxiv_id (or arxiv, eprint) / id / authors, as a Connected Papers
    export or a spreadsheet gives it. Raises InvalidRequest when nothing in it names a paper."""
    check_text_size(text, "the reference list", MAX_BIBTEX_CHARS)
    stripped = text.lstrip()
    if stripped.startswith("@"):
        items = parse_bibtex(text)
    elif stripped.startswith("["):
        try:
            items = [ReferenceItem.model_validate(row) for row in json.loads(text)]
        except (ValueError, ValidationError, RecursionError) as err:  # too deeply nested
            raise InvalidRequest(f"the JSON reference list is not a list of references "
                                 f"({err.__class__.__name__}); give objects with title, year, "
                                 "doi, arxiv_id or id") from err
    else:
        try:
            items = references_from_csv(text)
        except csv.Error as err:  # a field past the csv module's limit
            raise InvalidRequest(f"the CSV reference list cannot be read ({err}); give one "
                                 "row per reference under a header") from err
    if not items:
        raise InvalidRequest("the reference list names no paper; give BibTeX entries, a JSON "
                             "list, or CSV with a title, doi, arxiv_id or id column")
    return items


def references_from_csv(text: str) -> list[ReferenceItem]:
    rows = csv.DictReader(io.StringIO(text))
    names = {name.strip().lower(): name for name in rows.fieldnames or []}
    column = {field: next((names[n] for n in options if n in names), None) for field, options in
              {"title": ("title",), "year": ("year",), "doi": ("doi",),
               "arxiv_id": ("arxiv_id", "arxiv", "eprint", "arxiv id"), "id": ("id",),
               "authors": ("authors", "author")}.items()}
    items = []
    for number, row in enumerate(rows, start=1):
        values = {f: (row.get(c) or "").strip() if c else "" for f, c in column.items()}
        fields = {"title": values["title"], "year": values["year"], "doi": values["doi"],
                  "eprint": values["arxiv_id"],
                  "author": values["authors"].replace(";", " and ").replace(", ", " and ")}
        item = reference_from_fields(str(number), fields)
        if values["id"]:
            try:  # validated, so that an id past its length is dropped like a bad entry
                item = ReferenceItem.model_validate(
                    {**(item.model_dump() if item else {"key": str(number)}),
                     "id": values["id"]})
            except ValidationError:
                pass
        if item is not None:
            items.append(item)
    return items


def same_title(a: str, b: str) -> bool:
    # BibTeX titles carry TeX (braces, accent macros, math), as do many corpus titles.
    return title_similarity(plain_text(a), plain_text(b)) >= TITLE_MATCH


def resolve_references(graph: Graph, items: list[ReferenceItem]) -> list[ResolvedReference]:
    """Each item matched to a corpus paper: by id, then DOI, then arXiv id, then a title
    whose words agree (Jaccard >= TITLE_MATCH) among the title's full-text hits."""
    ids = [item.id for item in items if item.id]
    titles = {row["id"]: row["title"] for row in graph.read("read_papers", ids=ids)}
    dois = [key for item in items if (key := normalise_doi(item.doi))]
    arxiv = [key for item in items if (key := normalise_arxiv_id(item.arxiv_id))]
    by_identifier: dict[tuple[str, str], dict[str, str]] = {}
    for row in graph.read("match_papers_by_identifier", dois=dois, arxiv_ids=arxiv,
                          excluded=[]):
        key = row["doi"] if row["matched_by"] == "doi" else row["arxiv_id"]
        by_identifier[(row["matched_by"], key)] = {"id": row["id"], "title": row["title"]}
    return [resolve_one(graph, item, titles, by_identifier) for item in items]


def resolve_one(graph: Graph, item: ReferenceItem, titles: dict[str, str],
                by_identifier: dict[tuple[str, str], dict[str, str]]) -> ResolvedReference:
    if item.id and item.id in titles:
        return ResolvedReference(reference=item, paper_id=item.id, matched_by="id",
                                 title=titles[item.id])
    for kind, value in (("doi", normalise_doi(item.doi)),
                        ("arxiv_id", normalise_arxiv_id(item.arxiv_id))):
        found = by_identifier.get((kind, value)) if value else None
        if found is not None:
            return ResolvedReference(reference=item, paper_id=found["id"], matched_by=kind,
                                     title=found["title"])
    if item.title and has_searchable_word(item.title):
        for hit in search_hits(graph, item.title, 5, []):
            year_ok = item.year is None or hit.year is None or abs(item.year - hit.year) <= 1
            if year_ok and same_title(item.title, hit.title):
                return ResolvedReference(reference=item, paper_id=hit.id, matched_by="title",
                                         title=hit.title)
    return ResolvedReference(reference=item, paper_id=None, matched_by=None, title=None)


# --- the gap analysis --------------------------------------------------------------------


def find_citation_gaps(graph: Graph, encoder: Encoder, request: GapRequest,
                       models: ModelSettings | None = None, run_id: str | None = None,
                       observer: RunObserver = SILENT) -> GapReport:
    """Suggest papers the draft should cite; recorded as a Run of kind 'citation_gaps'."""
    run_id = run_id or uuid.uuid4().hex[:12]
    passages = cut_passages(request.draft, request.passage_sentences)
    if not passages:
        raise InvalidRequest("the draft has no sentence with a word in it; give the text "
                             "of the draft excerpt")
    endpoint = models.assessor if models is not None and models.assessor.configured else None
    backends = {"candidates": TEXT_RANKING, "evidence": "minilm-cosine",
                "assessment": f"model:{endpoint.model}" if endpoint else "offline"}
    with RunLifecycle.open(graph, run_id, "citation_gaps", request.draft[:500],
                           request.model_dump(mode="json"), backends, STAGES,
                           observer) as run:
        with run.stage("references"):
            references = resolve_references(graph, reference_items(request))
            cited = sorted({r.paper_id for r in references if r.paper_id} |
                           set(request.cited_ids))
        with run.stage("candidates"):
            candidates = gather_candidates(graph, encoder, passages, references, cited,
                                           request.pool, request.max_candidates)
        with run.stage("evidence"):
            suggestions = score_candidates(graph, encoder, passages, candidates,
                                           request.min_similarity)
        with run.stage("assess"):
            ledger = None
            if endpoint is not None and models is not None:
                runner = ModelRunner.from_settings(models)
                suggestions = assess_with_model(graph, runner, endpoint, suggestions)
                ledger = runner.ledger
            suggestions = rerank(suggestions)[:request.limit]
        report = GapReport(
            run_id=run_id, passages=passages, references=references, suggestions=suggestions,
            assessment=backends["assessment"] if endpoint else
            "offline: no assessor endpoint is configured, so the reasons are MiniLM "
            "similarities and citation links, not a model's judgement",
            counts={"passages": len(passages), "references": len(references),
                    "references_resolved": sum(r.paper_id is not None for r in references),
                    "candidates": len(candidates), "suggestions": len(suggestions)},
            backends=backends, timings=run.timings)
        if ledger is not None:
            run.usage = ledger.to_dict
        with run.stage("record"):
            record_gap_report(run, report)
        run.counts = report.counts
    return report


def record_report(run: RunLifecycle, report: BaseModel, returned: list[dict[str, Any]]) -> None:
    """The whole report on the Run node (`report`, JSON) and RETURNED links to the papers
    it puts forward; shared by the citation-gap, evolution and landscape runs."""
    run.recorder.link("link_run_results", returned)
    run.recorder.graph.write("literature_set_run_report", id=run.run_id,
                             report=to_json(report.model_dump(mode="json")))


def record_gap_report(run: RunLifecycle, report: GapReport) -> None:
    record_report(run, report, [{"paper_id": s.paper_id, "rank": s.rank, "score": s.score,
                                 "evidence": to_json(s.model_dump())}
                                for s in report.suggestions])


def reference_items(request: GapRequest) -> list[ReferenceItem]:
    items = parse_bibtex(request.bibtex) if request.bibtex else []
    if request.bibtex and not items:
        raise InvalidRequest("the BibTeX holds no entry with a title or an identifier; give "
                             "entries such as @article{key, title = {...}, year = {...}}")
    return items + [ReferenceItem(key=paper_id, id=paper_id) for paper_id in request.cited_ids]


def cut_passages(draft: str, size: int) -> list[Passage]:
    """Runs of `size` sentences that hold a word, with their offsets in the draft."""
    sentences = [(start, text) for start, text in split_sentences(draft)
                 if has_searchable_word(text)]
    return [Passage(index=number, start=sentences[i][0],
                    text=" ".join(text for _, text in sentences[i:i + size]))
            for number, i in enumerate(range(0, len(sentences), size))]


def gather_candidates(graph: Graph, encoder: Encoder, passages: list[Passage],
                      references: list[ResolvedReference], cited: list[str],
                      pool: int, most: int) -> dict[str, Candidate]:
    """Text hits of every passage, taken rank by rank across the passages (each passage's
    best hit first), then papers linked to two or more references, most links first; at
    most `most` in all, since each costs the embedding of its sentences."""
    rankings = [query_hits(graph, encoder, p.text, pool, cited) for p in passages]
    found: dict[str, Candidate] = {}
    for rank in range(pool):
        for hits in rankings:
            if rank < len(hits) and len(found) < most:
                found.setdefault(hits[rank].id, Candidate(hits[rank].id, set(), [])
                                 ).routes.add("text")
    links = reference_links(graph, references, cited)
    linked = sorted((p for p, refs in links.items() if len(refs) >= MIN_REFERENCE_LINKS),
                    key=lambda p: (-len(links[p]), p))
    for paper_id in linked:
        if paper_id in found or len(found) < most:
            found.setdefault(paper_id, Candidate(paper_id, set(), [])).routes.add("citation")
    for paper_id, candidate in found.items():
        candidate.links = sorted(links.get(paper_id, set()))
    return found


def reference_links(graph: Graph, references: list[ResolvedReference],
                    cited: list[str]) -> dict[str, set[str]]:
    """For each paper citing or cited by a resolved reference, which references those are."""
    reference_ids = sorted({r.paper_id for r in references if r.paper_id})
    rows = graph.read("read_citation_neighbours", seed_ids=reference_ids, excluded=cited,
                      limit=NEIGHBOURS_PER_REFERENCE) if reference_ids else []
    links: dict[str, set[str]] = {}
    for row in rows:
        links.setdefault(row["id"], set()).add(row["seed_id"])
    return links


def score_candidates(graph: Graph, encoder: Encoder, passages: list[Passage],
                     candidates: dict[str, Candidate],
                     min_similarity: float) -> list[GapSuggestion]:
    """Each candidate's closest (passage, sentence) pair by MiniLM cosine; those below
    `min_similarity` are dropped."""
    ids = sorted(candidates)
    papers = {row["id"]: row for row in graph.read("read_papers", ids=ids)}
    claims = {row["paper_id"]: row["claims"] for row in
              graph.read("read_claims", ids=ids, extractor=OfflineClaimExtractor.name)}
    units = [(paper_id, kind, text) for paper_id in ids
             for kind, text in evidence_units(papers[paper_id], claims.get(paper_id, []))]
    if not units:
        return []
    passage_vectors = encoder.encode([p.text for p in passages])
    unit_vectors = encoder.encode([text for _, _, text in units])
    similarity = unit_vectors @ passage_vectors.T  # unit vectors: the dot is the cosine
    best: dict[str, tuple[float, int, int]] = {}
    for row, (paper_id, _, _) in enumerate(units):
        column = int(np.argmax(similarity[row]))
        value = float(similarity[row, column])
        if paper_id not in best or value > best[paper_id][0]:
            best[paper_id] = (value, row, column)
    suggestions = []
    for paper_id, (value, row, column) in best.items():
        if value < min_similarity:
            continue
        candidate, paper = candidates[paper_id], papers[paper_id]
        _, kind, text = units[row]
        suggestions.append(offline_suggestion(candidate, paper, passages[column], kind, text,
                                              value))
    return suggestions


def evidence_units(paper: dict[str, object], claims: Iterable[dict[str, str]]
                   ) -> list[tuple[str, str]]:
    """The paper's abstract sentences and stored claims, as (kind, text)."""
    abstract = str(paper.get("abstract") or "")
    units = [("abstract", plain_text(text)) for _, text in split_sentences(abstract)
             if has_searchable_word(text)]
    units += [("claim", claim["text"]) for claim in claims if claim.get("text")]
    return units


def offline_suggestion(candidate: Candidate, paper: dict[str, object], passage: Passage,
                       kind: str, text: str, similarity: float) -> GapSuggestion:
    bonus = REFERENCE_BONUS * min(len(candidate.links), MAX_REFERENCE_LINKS)
    reasons = [f"its {kind} sentence \"{text}\" is close to passage {passage.index} "
               f"(MiniLM cosine {similarity:.2f})"]
    if candidate.links:
        reasons.append(f"linked by citation to {len(candidate.links)} of the draft's "
                       f"references ({', '.join(candidate.links)})")
    if "text" in candidate.routes:
        reasons.append("found by the passage's own text search")
    year = paper.get("year")
    return GapSuggestion(
        rank=0, paper_id=candidate.paper_id, title=str(paper.get("title") or ""),
        year=year if isinstance(year, int) else None, passage=passage.index,
        passage_text=passage.text, evidence=text, evidence_kind=kind,
        similarity=round(similarity, 4), reference_links=candidate.links,
        routes=sorted(candidate.routes), score=round(similarity + bonus, 4),
        why="; ".join(reasons), grade=None)


def assess_with_model(graph: Graph, runner: ModelRunner, endpoint: ModelEndpoint,
                      suggestions: list[GapSuggestion]) -> list[GapSuggestion]:
    """The assessor grades each suggestion's abstract against its passage; grades 0 and 1
    are dropped, a failed or ungraded call keeps the offline reason."""
    abstracts = {row["id"]: row["abstract"] for row in
                 graph.read("read_papers", ids=[s.paper_id for s in suggestions])}
    by_passage: dict[str, list[GapSuggestion]] = {}
    for suggestion in suggestions:
        by_passage.setdefault(suggestion.passage_text, []).append(suggestion)
    kept = []
    for passage, group in by_passage.items():
        papers = [IdeaPaper(s.paper_id, s.title, abstracts.get(s.paper_id), s.year)
                  for s in group]
        outcomes = assess_abstracts(runner, endpoint, passage, IdeaFacets([passage]), papers)
        for suggestion, outcome in zip(group, outcomes, strict=True):
            if isinstance(outcome, ModelReply) and outcome.value.coverage_level is not None:
                grade = outcome.value.coverage_level
                if grade < 2:
                    continue
                suggestion = suggestion.model_copy(update={
                    "grade": grade, "why": f"model grade {grade}: {outcome.value.notes}; "
                                           f"{suggestion.why}"})
            kept.append(suggestion)
    return kept


def rerank(suggestions: list[GapSuggestion]) -> list[GapSuggestion]:
    ordered = sorted(suggestions, key=lambda s: (-(s.grade or 0), -s.score, s.paper_id))
    return [s.model_copy(update={"rank": rank}) for rank, s in enumerate(ordered, start=1)]
