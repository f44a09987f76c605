"""One pydantic reply model per prompt, and the checks that need the request's context.

The models are strict: JSON types exactly (no "3" for 3, no true for 1), no extra keys, no
empty strings, scores inside their range. What a model alone cannot know (the matrix must be
n_citing x n_cited, ids must come from the request, a source phrase must occur in the
paper) is checked by the `check_*` functions: each takes the parsed reply and its context
and returns the problems found, an empty list when the reply is acceptable. The client
sends those problems back once as a repair request, then records a failure.
"""

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from crase.scoring.claims import ClaimType

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Phrase = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Grade = Annotated[int, Field(ge=0, le=3)]
EvidenceSource = Literal["abstract", "fulltext", "abstract_and_fulltext", "metadata_only"]
PaperRole = Literal["main_contribution", "key_technique", "background", "irrelevant"]

YEAR = re.compile(r"\b(19|20)\d{2}\b")
DOI = re.compile(r"^10\.\d{4,9}/\S+$")
ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")


class StrictReply(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# --- evidence-graph search -------------------------------------------------------------


class PlanReply(StrictReply):
    queries: list[Phrase] = Field(min_length=1, max_length=20)


class QuestionReply(StrictReply):
    """A benchmark query in question form (bench/query_forms.py)."""

    question: Phrase


class ClaimItem(StrictReply):
    # The quote comes first: a model steered through the fields in this order picks the
    # sentence, then writes the claim it supports. Text first, 17 of Qwen2.5-1.5B's 44
    # claims on hep-th quoted a sentence other than the one they restate (most often the
    # abstract's first).
    source_phrase: Phrase
    text: Text
    type: ClaimType


class ClaimsReply(StrictReply):
    claims: list[ClaimItem] = Field(min_length=1, max_length=10)


class EntailmentReply(StrictReply):
    matrix: list[list[Unit]] = Field(min_length=1, max_length=10)


# --- idea workflow: structuring and discovery ------------------------------------------


class FacetsReply(StrictReply):
    facets: list[Phrase] = Field(min_length=1, max_length=10)


class StructuralFeaturesReply(StrictReply):
    datasets: list[Phrase] = Field(max_length=15)
    metrics: list[Phrase] = Field(max_length=15)
    method_families: list[Phrase] = Field(max_length=15)


class HighLevelFacets(StrictReply):
    problem_facets: list[Phrase] = Field(max_length=7)
    setting_facets: list[Phrase] = Field(max_length=7)
    mechanism_facets: list[Phrase] = Field(max_length=7)
    assumption_facets: list[Phrase] = Field(max_length=7)


class RecalledPaper(StrictReply):
    title: Phrase
    venue: Phrase | None
    year: Annotated[int, Field(ge=1900, le=2100)] | None
    doi: Phrase | None
    arxiv_id: Phrase | None
    url: Phrase | None


class RecalledPapersReply(StrictReply):
    papers: list[RecalledPaper] = Field(max_length=50)


class SearchQueriesReply(StrictReply):
    bibliographic: list[Phrase] = Field(min_length=1, max_length=30)
    web: list[Phrase] = Field(min_length=1, max_length=30)


# --- idea workflow: assessment and ranking ---------------------------------------------


class AbstractAssessmentReply(StrictReply):
    coverage_level: Grade | None
    covered_facets: list[Phrase]
    task_similarity: Unit | None
    method_similarity: Unit | None
    notes: Text
    paper_facets: HighLevelFacets


class NeighbourScore(StrictReply):
    paper_id: Phrase
    score: Grade | None
    reason: Text


class NeighbourScoresReply(StrictReply):
    papers: list[NeighbourScore] = Field(min_length=1, max_length=40)


class RankedCandidate(StrictReply):
    rank: Annotated[int, Field(ge=1)]
    paper_id: Phrase
    expert_reason: Text
    evidence_source: EvidenceSource


class ExpertRankingReply(StrictReply):
    candidates: list[RankedCandidate] = Field(min_length=1, max_length=5)


class RefinedAssessmentReply(StrictReply):
    coverage_level_refined: Grade
    role: PaperRole
    notes: Text
    supporting_windows: list[Phrase]


class ReportSection(StrictReply):
    heading: Phrase
    markdown: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ReportReply(StrictReply):
    tldr: Text
    sections: list[ReportSection] = Field(min_length=1, max_length=12)
    cited_paper_ids: list[Phrase]


REPORT_HEADINGS: dict[str, list[str]] = {
    "report_full": [
        "Problem setting and research idea",
        "Domain overview",
        "Highly similar work",
        "Related work with partial overlap",
        "Adjacent and broader directions",
        "Gaps, opportunities and positioning",
        "Limitations of this mapping",
    ],
    "report_related_work": ["Landscape", "Most similar work", "Adjacent directions"],
}

# --- research tools: the code extractor's model analysis -----------------------------

Component = Literal["training loop", "preprocessing", "hyperparameters", "evaluation",
                    "model architecture", "data", "other"]


class MissingComponent(StrictReply):
    component: Component
    detail: Text


class ImplementationReply(StrictReply):
    frameworks: list[Phrase] = Field(max_length=20)
    dependencies: list[Phrase] = Field(max_length=50)
    model_structure: list[Phrase] = Field(max_length=30)
    missing_components: list[MissingComponent] = Field(max_length=20)
    pseudocode_completeness: Annotated[int, Field(ge=0, le=2)]
    reproducibility_level: Annotated[int, Field(ge=1, le=3)]
    notes: Text


REPLY_MODELS: dict[str, type[StrictReply]] = {
    "plan_queries": PlanReply,
    "write_search_question": QuestionReply,
    "extract_claims": ClaimsReply,
    "score_entailment": EntailmentReply,
    "idea_facets": FacetsReply,
    "idea_structural_features": StructuralFeaturesReply,
    "idea_high_level_facets": HighLevelFacets,
    "idea_recall_papers": RecalledPapersReply,
    "idea_search_queries": SearchQueriesReply,
    "assess_abstract": AbstractAssessmentReply,
    "score_neighbours": NeighbourScoresReply,
    "rank_expert": ExpertRankingReply,
    "refine_fulltext": RefinedAssessmentReply,
    "report_full": ReportReply,
    "report_related_work": ReportReply,
    "analyze_implementation": ImplementationReply,
}


@dataclass(frozen=True)
class SuppliedEvidence:
    """What the expert was given for one candidate; its evidence_source must agree."""

    abstract: bool
    fulltext: bool


# --- context checks: each returns the problems, [] when the reply is acceptable ---------


def check_plan(reply: PlanReply, count: int, max_words: int = 12) -> list[str]:
    problems = _count_problems("queries", len(reply.queries), count, count)
    problems += _duplicate_problems("queries", reply.queries)
    problems += [
        f"query {query!r} has more than {max_words} words; use keywords"
        for query in reply.queries
        if len(query.split()) > max_words
    ]
    return problems


# A question that points at its own paper is no query anyone could type before reading it.
SELF_REFERENCES = ("this paper", "the paper", "this work", "the authors", "this study")


def check_question(reply: QuestionReply, title: str, min_words: int = 6,
                   max_words: int = 40) -> list[str]:
    """A question, not a statement or a copy of the title: a title query asked as a
    question would measure the title form twice."""
    question = reply.question
    problems = []
    if not question.endswith("?"):
        problems.append("the question must end with a question mark")
    elif question.count("?") > 1:
        problems.append("write one question, not several")
    words = len(question.split())
    if not min_words <= words <= max_words:
        problems.append(f"the question has {words} words; write {min_words} to {max_words}")
    mentioned = [phrase for phrase in SELF_REFERENCES if phrase in normalise_text(question)]
    if mentioned:
        problems.append(f"the question refers to the paper itself ({mentioned[0]!r}); ask "
                        "about the topic directly, as a researcher who has not seen it")
    if normalise_text(title) and normalise_text(title) in normalise_text(question):
        problems.append(f"the question repeats the title {title!r} word for word; keep its "
                        "topic but say it in other words")
    return problems


def check_claims(
    reply: ClaimsReply, source_text: str, min_claims: int = 4, max_claims: int = 5
) -> list[str]:
    problems = _count_problems("claims", len(reply.claims), min_claims, max_claims)
    texts = [claim.text for claim in reply.claims]
    repeated = _duplicate_problems("claim texts", texts)
    if repeated:
        # A bare "appears 2 times" brought the same claims back; saying what to do
        # instead lets a small model leave its loop. Dropping the copies is an edit it
        # can make; writing new claims is asked for only where the count needs them.
        if len({normalise_text(text) for text in texts}) >= min_claims:
            repeated.append("keep one copy of each repeated claim and drop the others")
        else:
            repeated.append("write each repeated claim again about a different sentence of "
                            "the paper text, or split a sentence that says two things into "
                            "two claims")
    problems += repeated
    source = normalise_text(source_text)
    for number, claim in enumerate(reply.claims, start=1):
        phrase = normalise_text(claim.source_phrase).strip("\"'.… ")
        if len(phrase.split()) < 3:
            problems.append(f"claim {number}: source_phrase must be at least 3 words")
        elif phrase not in source:
            problems.append(
                f"claim {number}: source_phrase {claim.source_phrase!r} is not a verbatim span "
                "of the paper text"
            )
    return problems


def check_entailment(reply: EntailmentReply, n_citing: int, n_cited: int) -> list[str]:
    rows = len(reply.matrix)
    problems = [] if rows == n_citing else [f"matrix has {rows} rows, expected {n_citing}"]
    problems += [
        f"row {number} has {len(row)} values, expected {n_cited}"
        for number, row in enumerate(reply.matrix, start=1)
        if len(row) != n_cited
    ]
    return problems


def check_facets(reply: FacetsReply, min_facets: int = 3, max_facets: int = 7) -> list[str]:
    problems = _count_problems("facets", len(reply.facets), min_facets, max_facets)
    return problems + _duplicate_problems("facets", reply.facets)


def check_structural_features(reply: StructuralFeaturesReply) -> list[str]:
    return (
        _duplicate_problems("datasets", reply.datasets)
        + _duplicate_problems("metrics", reply.metrics)
        + _duplicate_problems("method_families", reply.method_families)
    )


def check_high_level_facets(reply: HighLevelFacets) -> list[str]:
    problems: list[str] = []
    for field_name in HighLevelFacets.model_fields:
        problems += _duplicate_problems(field_name, getattr(reply, field_name))
    if not reply.problem_facets:
        problems.append("problem_facets must name at least one problem")
    return problems


def check_recalled_papers(reply: RecalledPapersReply, max_papers: int) -> list[str]:
    problems = _count_problems("papers", len(reply.papers), 0, max_papers)
    repeated = _duplicate_problems("titles", [paper.title for paper in reply.papers])
    if repeated:
        # Qwen2.5-1.5B wrote one title 6 and 7 times, and again when told only that;
        # dropping the copies is an edit a small model can make.
        repeated.append("keep one copy of each repeated paper and drop the others; fewer "
                        "papers are fine")
    problems += repeated
    for number, paper in enumerate(reply.papers, start=1):
        if paper.doi is not None and not DOI.match(paper.doi):
            problems.append(f"paper {number}: doi {paper.doi!r} is not of the form 10.x/y")
        if paper.arxiv_id is not None and not ARXIV_ID.match(paper.arxiv_id):
            problems.append(f"paper {number}: arxiv_id {paper.arxiv_id!r} is not an arXiv id")
        if paper.url is not None and not paper.url.startswith(("http://", "https://")):
            problems.append(f"paper {number}: url must start with http:// or https://")
    return problems


def check_search_queries(
    reply: SearchQueriesReply, max_bibliographic: int, max_web: int
) -> list[str]:
    problems = _count_problems("bibliographic", len(reply.bibliographic), 1, max_bibliographic)
    problems += _count_problems("web", len(reply.web), 1, max_web)
    problems += _duplicate_problems("bibliographic", reply.bibliographic)
    problems += _duplicate_problems("web", reply.web)
    for query in [*reply.bibliographic, *reply.web]:
        if "site:" in query.lower():
            problems.append(f"query {query!r}: no site: filters")
        if YEAR.search(query):
            problems.append(f"query {query!r}: no years; the year range is applied separately")
    problems += [
        f"bibliographic query {query!r}: at most one quoted phrase"
        for query in reply.bibliographic
        if query.count('"') > 2
    ]
    problems += [f"web query {query!r}: no quotation marks" for query in reply.web if '"' in query]
    return problems


def check_assessment(reply: AbstractAssessmentReply, facet_labels: Iterable[str]) -> list[str]:
    labels = set(facet_labels)
    problems = _duplicate_problems("covered_facets", reply.covered_facets)
    problems += [
        f"covered_facets: {label!r} is not one of {sorted(labels)}"
        for label in reply.covered_facets
        if label not in labels
    ]
    similarities = (reply.task_similarity, reply.method_similarity)
    if reply.coverage_level is None:
        if reply.covered_facets or any(value is not None for value in similarities):
            problems.append(
                "coverage_level null (insufficient evidence) needs covered_facets [] and "
                "null similarities"
            )
    elif any(value is None for value in similarities):
        problems.append("a graded paper needs task_similarity and method_similarity")
    if reply.coverage_level == 0 and reply.covered_facets:
        problems.append("coverage_level 0 means no overlap: covered_facets must be []")
    return problems


def check_neighbour_scores(reply: NeighbourScoresReply, paper_ids: Iterable[str]) -> list[str]:
    return _id_set_problems([item.paper_id for item in reply.papers], list(paper_ids))


def check_expert_ranking(
    reply: ExpertRankingReply,
    supplied: Mapping[str, SuppliedEvidence],
    work_ids: Mapping[str, str] | None = None,
) -> list[str]:
    """Members only, distinct works, ranks 1..min(5, |shortlist|) in order, and each
    evidence_source claims only what was supplied for that candidate."""
    expected = min(5, len(supplied))
    ids = [item.paper_id for item in reply.candidates]
    problems = _count_problems("candidates", len(ids), expected, expected)
    ranks = [item.rank for item in reply.candidates]
    if ranks != list(range(1, len(ranks) + 1)):
        problems.append(f"ranks must be 1..{len(ranks)} in order, got {ranks}")
    problems += [f"paper_id {pid!r} is not in the shortlist" for pid in ids if pid not in supplied]
    problems += _repeated_id_problems(ids)
    works = [(work_ids or {}).get(pid, pid) for pid in ids if pid in supplied]
    if len(set(works)) != len(works) and len(set(ids)) == len(ids):
        problems.append("two candidates are versions of the same work; rank the work once")
    for item in reply.candidates:
        evidence = supplied.get(item.paper_id)
        if evidence is not None and item.evidence_source != allowed_source(evidence):
            problems.append(
                f"paper_id {item.paper_id!r}: evidence_source must be "
                f"{allowed_source(evidence)!r} for what was supplied, not {item.evidence_source!r}"
            )
    return problems


def allowed_source(evidence: SuppliedEvidence) -> EvidenceSource:
    """The one evidence_source label consistent with the supplied material."""
    if evidence.abstract and evidence.fulltext:
        return "abstract_and_fulltext"
    if evidence.fulltext:
        return "fulltext"
    return "abstract" if evidence.abstract else "metadata_only"


def check_refinement(reply: RefinedAssessmentReply, window_ids: Iterable[str]) -> list[str]:
    known = set(window_ids)
    problems = _duplicate_problems("supporting_windows", reply.supporting_windows)
    problems += [
        f"supporting_windows: {wid!r} was not supplied"
        for wid in reply.supporting_windows
        if wid not in known
    ]
    if reply.role == "irrelevant" and reply.coverage_level_refined != 0:
        problems.append("role irrelevant needs coverage_level_refined 0")
    return problems


def check_report(reply: ReportReply, template: str, paper_ids: Iterable[str]) -> list[str]:
    expected = REPORT_HEADINGS[template]
    headings = [section.heading for section in reply.sections]
    problems = [] if headings == expected else [f"section headings must be {expected}"]
    known = set(paper_ids)
    problems += _duplicate_problems("cited_paper_ids", reply.cited_paper_ids)
    problems += [
        f"cited paper {pid!r} was not supplied"
        for pid in reply.cited_paper_ids
        if pid not in known
    ]
    return problems


def normalise_text(text: str) -> str:
    """Case, width, quote and whitespace differences removed, for verbatim checks."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans("‘’“”–—‐", "''\"\"---"))
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"(\w)- (\w)", r"\1-\2", text)  # words hyphenated across a line break
    return text.strip().casefold()


def _count_problems(what: str, count: int, low: int, high: int) -> list[str]:
    if low <= count <= high:
        return []
    wanted = str(low) if low == high else f"{low} to {high}"
    return [f"{what}: expected {wanted}, got {count}"]


def _duplicate_problems(what: str, values: Iterable[str]) -> list[str]:
    counts = Counter(normalise_text(value) for value in values)
    return [f"{what}: {value!r} appears {n} times" for value, n in counts.items() if n > 1]


def _repeated_id_problems(ids: list[str]) -> list[str]:
    return [f"paper_id {pid!r} appears {n} times" for pid, n in Counter(ids).items() if n > 1]


def _id_set_problems(returned: list[str], supplied: list[str]) -> list[str]:
    problems = _repeated_id_problems(returned)
    problems += [f"paper_id {pid!r} was not supplied" for pid in returned if pid not in supplied]
    missing = [pid for pid in supplied if pid not in returned]
    if missing:
        problems.append(f"no entry for supplied paper_id(s) {missing}")
    return problems
