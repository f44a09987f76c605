"""Typed calls for the model roles of the idea-to-prior-work workflow.

Each function builds the prompt inputs (paper text always inside data blocks), runs the
calls through a ModelRunner and returns outcomes in input order: a ModelReply (the
validated value plus model, prompt version and tokens), a ModelFailure (recorded, never
turned into a grade), or Unassessed where there was nothing to send (no abstract, no
full text), so missing evidence is never mistaken for a zero. The pipeline decides what
to do with each; these functions hold no workflow logic.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from crase.models.chat import (
    ModelCall,
    ModelFailure,
    ModelReply,
    ModelRunner,
    Outcome,
    endpoint_for,
)
from crase.prompts.catalog import data_block, load_prompt
from crase.prompts.replies import (
    AbstractAssessmentReply,
    ExpertRankingReply,
    FacetsReply,
    HighLevelFacets,
    RecalledPapersReply,
    RefinedAssessmentReply,
    ReportReply,
    SearchQueriesReply,
    StructuralFeaturesReply,
    SuppliedEvidence,
    allowed_source,
    check_assessment,
    check_expert_ranking,
    check_facets,
    check_high_level_facets,
    check_neighbour_scores,
    check_recalled_papers,
    check_refinement,
    check_report,
    check_search_queries,
    check_structural_features,
)
from crase.prompts.reply_schemas import (
    assessment_schema,
    expert_schema,
    facets_schema,
    neighbour_schema,
    search_queries_schema,
)
from crase.settings import ModelEndpoint, ModelSettings

NEIGHBOUR_BATCH = 20  # papers per neighbour-scoring call, as in the published workflow
PdfStatus = Literal["acquired", "unavailable", "not_attempted"]


@dataclass(frozen=True)
class IdeaPaper:
    id: str
    title: str
    abstract: str | None = None
    year: int | None = None
    venue: str | None = None

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract and self.abstract.strip())

    def as_data(self) -> dict[str, Any]:
        return {
            "paper_id": self.id, "title": self.title, "year": self.year,
            "venue": self.venue, "abstract": self.abstract if self.has_abstract else None,
        }


@dataclass(frozen=True)
class EvidenceWindow:
    """A passage of a paper's PDF text, located so the audit can find it again."""

    id: str
    page: int
    start: int
    end: int
    sha256: str
    text: str


@dataclass(frozen=True)
class ShortlistEntry:
    paper: IdeaPaper
    work_id: str  # identity after de-duplication: versions of one work share it
    pdf_status: PdfStatus
    windows: tuple[EvidenceWindow, ...] = ()
    assessment: dict[str, Any] | None = None  # the earlier grade and notes, as recorded
    # The work's place in the idea's own text ranking (BM25 and embeddings fused, as the
    # search ranks a query); None beyond its depth. Not sent to a model.
    text_rank: int | None = None
    # Links of the citation gate between the work and the idea's seeds (a seed it cites or
    # that cites it); the learned final order reads them. Not sent to a model.
    neighbour_links: int = 0

    @property
    def supplied(self) -> SuppliedEvidence:
        return SuppliedEvidence(abstract=self.paper.has_abstract, fulltext=bool(self.windows))

    def as_data(self) -> dict[str, Any]:
        return {
            **self.paper.as_data(),
            "pdf_status": self.pdf_status,
            "supplied": {"abstract": self.supplied.abstract, "fulltext": self.supplied.fulltext},
            "earlier_assessment": self.assessment,
            "pdf_passages": [
                {"window_id": window.id, "page": window.page, "text": window.text}
                for window in self.windows
            ],
        }


@dataclass(frozen=True)
class NeighbourRequest:
    """What the neighbour scorer judges against; queries, keywords and facets are helpers."""

    research_query: str
    idea: str
    search_queries: Sequence[str] = ()
    keywords: Sequence[str] = ()
    facets: Sequence[str] = ()


@dataclass(frozen=True)
class NeighbourGrade:
    paper_id: str
    score: int | None  # None: the model found the evidence insufficient
    reason: str
    model: str
    prompt: str


@dataclass(frozen=True)
class Unassessed:
    """Nothing was sent for this paper: the evidence a grade needs is missing."""

    paper_id: str
    reason: str


@dataclass(frozen=True)
class IdeaFacets:
    facets: list[str] = field(default_factory=list)

    def labelled(self) -> list[dict[str, str]]:
        pairs = zip(self.labels(), self.facets, strict=True)
        return [{"label": label, "facet": facet} for label, facet in pairs]

    def labels(self) -> list[str]:
        return [f"F{number}" for number in range(1, len(self.facets) + 1)]


def endpoint_for_prompt(models: ModelSettings, prompt_name: str) -> ModelEndpoint:
    """The endpoint of the role the prompt's header names."""
    return endpoint_for(models, load_prompt(prompt_name).role)


# --- structuring and discovery ----------------------------------------------------------


def derive_facets(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    idea: str,
    min_facets: int = 3,
    max_facets: int = 7,
) -> ModelReply[FacetsReply] | ModelFailure:
    call: ModelCall[FacetsReply] = ModelCall(
        load_prompt("idea_facets"),
        {"idea": data_block(idea), "min_facets": min_facets, "max_facets": max_facets},
        stage="idea.facets",
        check=partial(check_facets, min_facets=min_facets, max_facets=max_facets),
        schema=facets_schema(min_facets, max_facets),
    )
    return runner.run_one(endpoint, call)


def extract_structural_features(
    runner: ModelRunner, endpoint: ModelEndpoint, idea: str
) -> ModelReply[StructuralFeaturesReply] | ModelFailure:
    call: ModelCall[StructuralFeaturesReply] = ModelCall(
        load_prompt("idea_structural_features"), {"idea": data_block(idea)},
        stage="idea.features", check=check_structural_features,
    )
    return runner.run_one(endpoint, call)


def derive_high_level_facets(
    runner: ModelRunner, endpoint: ModelEndpoint, idea: str
) -> ModelReply[HighLevelFacets] | ModelFailure:
    call: ModelCall[HighLevelFacets] = ModelCall(
        load_prompt("idea_high_level_facets"), {"idea": data_block(idea)},
        stage="idea.high_level_facets", check=check_high_level_facets,
    )
    return runner.run_one(endpoint, call)


def recall_papers(
    runner: ModelRunner, endpoint: ModelEndpoint, idea: str, max_papers: int = 20
) -> ModelReply[RecalledPapersReply] | ModelFailure:
    """Titles the model remembers: hypotheses to resolve against the corpus, not papers."""
    call: ModelCall[RecalledPapersReply] = ModelCall(
        load_prompt("idea_recall_papers"), {"idea": data_block(idea), "max_papers": max_papers},
        stage="idea.recall", check=partial(check_recalled_papers, max_papers=max_papers),
    )
    return runner.run_one(endpoint, call)


def generate_search_queries(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    idea: str,
    facets: IdeaFacets,
    max_bibliographic: int = 8,
    max_web: int = 6,
) -> ModelReply[SearchQueriesReply] | ModelFailure:
    call: ModelCall[SearchQueriesReply] = ModelCall(
        load_prompt("idea_search_queries"),
        {
            "idea": data_block(idea), "facets": data_block(facets.facets),
            "max_bibliographic": max_bibliographic, "max_web": max_web,
        },
        stage="idea.queries",
        check=partial(check_search_queries, max_bibliographic=max_bibliographic, max_web=max_web),
        schema=search_queries_schema(max_bibliographic, max_web),
    )
    return runner.run_one(endpoint, call)


# --- assessment and ranking -------------------------------------------------------------


def assess_abstracts(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    idea: str,
    facets: IdeaFacets,
    papers: Sequence[IdeaPaper],
) -> list[ModelReply[AbstractAssessmentReply] | ModelFailure | Unassessed]:
    """One merged assessment per paper (grade, covered facets, similarities, notes, the
    paper's own facets); papers without an abstract are Unassessed and cost nothing."""
    prompt = load_prompt("assess_abstract")
    labels = facets.labels()
    shared = {
        "idea": data_block(idea),
        "facets": data_block(facets.labelled()),
        "facet_labels": ", ".join(labels) if labels else "(no facets)",
    }
    calls = {
        paper.id: ModelCall(
            prompt, {**shared, "paper": data_block(paper.as_data())}, subject=paper.id,
            stage="idea.assess", check=partial(check_assessment, facet_labels=labels),
            schema=assessment_schema(labels),
        )
        for paper in papers
        if paper.has_abstract
    }
    replies = dict(zip(calls, runner.run(endpoint, list(calls.values())), strict=True))
    return [replies.get(paper.id) or Unassessed(paper.id, "no abstract") for paper in papers]


def score_neighbours(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    request: NeighbourRequest,
    papers: Sequence[IdeaPaper],
    batch_size: int = NEIGHBOUR_BATCH,
) -> list[NeighbourGrade | ModelFailure | Unassessed]:
    """Grades 0-3 or null for citation neighbours, in batches; a failed batch leaves each
    of its papers with the failure, and papers without an abstract are Unassessed."""
    prompt = load_prompt("score_neighbours")
    context = data_block({
        "research_query": request.research_query, "idea": request.idea,
        "search_queries": list(request.search_queries),
        "relevance_keywords": list(request.keywords), "facets": list(request.facets),
    })
    graded = [paper for paper in papers if paper.has_abstract]
    batches = [graded[start : start + batch_size] for start in range(0, len(graded), batch_size)]
    calls = [
        ModelCall(
            prompt,
            {
                "request": context,
                "papers": data_block([paper.as_data() for paper in batch]),
                "count": len(batch),
            },
            subject=",".join(p.id for p in batch), stage="idea.neighbours",
            check=partial(check_neighbour_scores, paper_ids=[p.id for p in batch]),
            schema=neighbour_schema([p.id for p in batch]),
        )
        for batch in batches
    ]
    results: dict[str, NeighbourGrade | ModelFailure] = {}
    for batch, outcome in zip(batches, runner.run(endpoint, calls), strict=True):
        results.update(_neighbour_results(batch, outcome))
    return [results.get(paper.id) or Unassessed(paper.id, "no abstract") for paper in papers]


def _neighbour_results(
    batch: list[IdeaPaper], outcome: Outcome
) -> dict[str, NeighbourGrade | ModelFailure]:
    if isinstance(outcome, ModelFailure):
        return {paper.id: outcome for paper in batch}
    return {
        item.paper_id: NeighbourGrade(
            paper_id=item.paper_id, score=item.score, reason=item.reason,
            model=outcome.model, prompt=outcome.prompt,
        )
        for item in outcome.value.papers
    }


def rank_shortlist(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    idea: str,
    facets: IdeaFacets,
    shortlist: Sequence[ShortlistEntry],
) -> ModelReply[ExpertRankingReply] | ModelFailure:
    """The joint expert Top-min(5, |shortlist|), validated for membership, distinct works,
    consecutive ranks and evidence sources consistent with what was supplied."""
    prompt = load_prompt("rank_expert")
    count = min(5, len(shortlist))
    call: ModelCall[ExpertRankingReply] = ModelCall(
        prompt,
        {
            "idea": data_block(idea), "facets": data_block(facets.labelled()),
            "candidates": data_block([entry.as_data() for entry in shortlist]), "count": count,
        },
        stage="idea.expert",
        check=partial(
            check_expert_ranking,
            supplied={entry.paper.id: entry.supplied for entry in shortlist},
            work_ids={entry.paper.id: entry.work_id for entry in shortlist},
        ),
        schema=expert_schema(
            [(entry.paper.id, allowed_source(entry.supplied)) for entry in shortlist], count
        ) if count else None,
    )
    if not shortlist:
        return runner.skip(endpoint, call, "empty shortlist")
    return runner.run_one(endpoint, call)


def refine_with_fulltext(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    idea: str,
    facets: IdeaFacets,
    entries: Sequence[ShortlistEntry],
) -> list[ModelReply[RefinedAssessmentReply] | ModelFailure | Unassessed]:
    """Report mode: a refined grade per paper with PDF passages; others are Unassessed."""
    prompt = load_prompt("refine_fulltext")
    shared = {"idea": data_block(idea), "facets": data_block(facets.labelled())}
    calls = {
        entry.paper.id: ModelCall(
            prompt,
            {
                **shared,
                "paper": data_block(entry.paper.as_data()),
                "windows": data_block([
                    {"window_id": w.id, "page": w.page, "text": w.text} for w in entry.windows
                ]),
            },
            subject=entry.paper.id, stage="idea.refine",
            check=partial(check_refinement, window_ids=[w.id for w in entry.windows]),
        )
        for entry in entries
        if entry.windows
    }
    replies = dict(zip(calls, runner.run(endpoint, list(calls.values())), strict=True))
    return [
        replies.get(entry.paper.id) or Unassessed(entry.paper.id, "no full-text passages")
        for entry in entries
    ]


def write_report(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    template: Literal["report_full", "report_related_work"],
    synthesis: dict[str, Any],
    paper_ids: Sequence[str],
) -> ModelReply[ReportReply] | ModelFailure:
    """A report from the saved evidence; it may cite only the supplied papers."""
    call: ModelCall[ReportReply] = ModelCall(
        load_prompt(template), {"synthesis": data_block(synthesis)}, stage="idea.report",
        check=partial(check_report, template=template, paper_ids=list(paper_ids)),
    )
    return runner.run_one(endpoint, call)
