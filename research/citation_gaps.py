"""Citation-gap analysis of a draft: given an excerpt and the references it already has
(BibTeX entries or paper ids), the corpus papers it plausibly should cite, each with the
passage of the draft it fits and why.

The draft's references are read by crase/reference_lists.py and found in the corpus by
search/reference_resolution.py; the report is stored as every literature run stores its own
(literature_runs.py).

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

import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from crase.bibtex import MAX_BIBTEX_CHARS
from crase.errors import InvalidRequest, ParameterAboveServerCap
from crase.graph import Graph
from crase.idea.roles.model_calls import IdeaFacets, IdeaPaper, assess_abstracts
from crase.models.chat import ModelReply, ModelRunner
from crase.reference_lists import ReferenceItem, parse_bibtex
from crase.research.literature_runs import TEXT_RANKING, record_report
from crase.run_lifecycle import SILENT, RunLifecycle, RunObserver, to_json
from crase.scoring.tex import plain_text
from crase.search.reference_resolution import ResolvedReference, resolve_references
from crase.search.roles.offline_claims import OfflineClaimExtractor, split_sentences
from crase.search.text_ranking import Encoder, has_searchable_word, query_hits
from crase.settings import ModelEndpoint, ModelSettings

STAGES = ("references", "candidates", "evidence", "assess", "record")
REFERENCE_BONUS = 0.05
MAX_REFERENCE_LINKS = 3
# The most passages of one draft: a 20,000-character draft of prose has 150 to 200
# sentences, so its passages stay at `passage_sentences` sentences.
MAX_PASSAGES = 100
MIN_REFERENCE_LINKS = 2  # a citation-route candidate is linked to this many references
NEIGHBOURS_PER_REFERENCE = 200

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
    passage_sentences: int = Field(2, ge=1, le=20, description="Sentences per passage "
                                   f"(more where the draft would have over {MAX_PASSAGES})")
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


def find_citation_gaps(graph: Graph, encoder: Encoder, request: GapRequest,
                       models: ModelSettings | None = None, run_id: str | None = None,
                       observer: RunObserver = SILENT,
                       max_references: int | None = None) -> GapReport:
    """Suggest papers the draft should cite; recorded as a Run of kind 'citation_gaps'.
    `max_references`: the most references resolved (the HTTP API's cap), past which
    ParameterAboveServerCap before the run opens."""
    run_id = run_id or uuid.uuid4().hex[:12]
    passages = cut_passages(request.draft, request.passage_sentences)
    if not passages:
        raise InvalidRequest("the draft has no sentence with a word in it; give the text "
                             "of the draft excerpt")
    items = reference_items(request)
    if max_references is not None and len(items) > max_references:
        raise ParameterAboveServerCap(
            f"the draft's references hold {len(items):,} entries and cited ids; this server "
            f"resolves at most {max_references:,} a request "
            "(api.citation_gaps_max_references); send the references the excerpt cites")
    endpoint = models.assessor if models is not None and models.assessor.configured else None
    backends = {"candidates": TEXT_RANKING, "evidence": "minilm-cosine",
                "assessment": f"model:{endpoint.model}" if endpoint else "offline"}
    with RunLifecycle.open(graph, run_id, "citation_gaps", request.draft[:500],
                           request.model_dump(mode="json"), backends, STAGES,
                           observer) as run:
        with run.stage("references"):
            references = resolve_references(graph, items)
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
    """Runs of `size` sentences that hold a word, with their offsets in the draft; longer
    runs where `size` would give more than MAX_PASSAGES, since each passage costs a text
    search and an embedding (3,499 sentences of two letters took 52 s)."""
    sentences = [(start, text) for start, text in split_sentences(draft)
                 if has_searchable_word(text)]
    size = max(size, math.ceil(len(sentences) / MAX_PASSAGES))
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
