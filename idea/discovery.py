"""Discovery routes: where candidates come from, each hit recorded with its route.

- fulltext: every generated query against the local full-text index (title + abstract).
- recalled: titles the expert model remembers. A recalled title is a hypothesis until it
  is resolved: by DOI or arXiv id, else by its title in the corpus (same normalised title,
  or word overlap of at least 0.9, and a year at most one apart when both are known).
  Crossref (DOI) and arXiv (identifier) verify it when they are reachable. Unresolved
  titles stay in the audit as unresolved hypotheses; they never become candidates.
- semantic_scholar_search: the same queries against Semantic Scholar, when it answers.
- openalex_search: the same queries against OpenAlex, where a key is set and it answers.
- citation neighbours come later, from the gate (`neighbour_gate.py`).

Every route reports whether it ran, was skipped (and why) or failed, apart from the
provider availability recorded by `providers.probe_providers`.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from crase.errors import ProviderError
from crase.graph import Graph
from crase.idea.candidates import RouteHit, RouteName
from crase.idea.identity import IdentityRegistry
from crase.idea.providers import (
    ProviderStatus,
    describe_error,
    search_openalex,
    search_semantic_scholar,
)
from crase.ingest.arxiv import arxiv_record
from crase.ingest.crossref import crossref_record
from crase.ingest.provider_http import ProviderClient
from crase.ingest.records import PaperRecord
from crase.paper_identity import (
    identifier_keys,
    normalise_arxiv_id,
    normalise_doi,
    normalise_title,
    title_similarity,
)
from crase.search.text_ranking import escape_lucene
from crase.settings import ProviderSettings

TITLE_MATCH = 0.9  # word overlap from which a corpus title resolves a recalled title
TITLE_CANDIDATES = 10  # corpus titles compared per look-up
RouteStatus = Literal["ran", "skipped", "failed", "partial"]


@dataclass
class RouteReport:
    route: str
    status: RouteStatus
    reason: str = ""
    records: int = 0  # hits the route returned (before de-duplication)
    works: int = 0  # distinct works it touched
    details: list[dict[str, Any]] = field(default_factory=list)

    def to_audit(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RecalledTitle:
    title: str
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    url: str | None = None


@dataclass
class RecallOutcome:
    status: Literal["recalled", "skipped", "failed"]
    backend: str
    titles: list[RecalledTitle] = field(default_factory=list)
    reason: str = ""
    failure: dict[str, Any] | None = None


def fulltext_records(graph: Graph, query: str, limit: int,
                     excluded: Sequence[str]) -> list[tuple[PaperRecord, float]]:
    text = escape_lucene(query)
    if not text:
        return []
    rows = graph.read("search_idea_candidates", query=text, limit=limit, excluded=list(excluded))
    return [(PaperRecord.from_row(row), float(row["score"])) for row in rows]


def search_fulltext(graph: Graph, registry: IdentityRegistry, queries: Sequence[str],
                    limit: int, excluded: Sequence[str]) -> RouteReport:
    report = RouteReport("fulltext", "ran")
    touched: set[int] = set()
    for index, query in enumerate(queries):
        hits = fulltext_records(graph, query, limit, excluded)
        report.details.append({"query_index": index, "query": query, "hits": len(hits)})
        for rank, (record, score) in enumerate(hits, start=1):
            hit = RouteHit("fulltext", {"query_index": index, "query": query, "rank": rank,
                                        "score": round(score, 6)})
            work = registry.add(record, hit)
            if work is not None:
                touched.add(id(work))
            report.records += 1
    report.works = len(touched)
    if not queries:
        report.status, report.reason = "skipped", "no queries were generated"
    return report


# --- resolving a record against the corpus ----------------------------------------------


def find_by_identifier(graph: Graph, doi: str | None, arxiv_id: str | None,
                       excluded: Sequence[str]) -> tuple[PaperRecord, str] | None:
    # One key per identifier: the graph stores DOIs and arXiv ids in the identity
    # module's spelling (an arXiv DOI is looked for as its arXiv id too).
    keys = identifier_keys(doi, arxiv_id)
    if not keys.dois and not keys.arxiv_ids:
        return None
    rows = graph.read("match_papers_by_identifier", dois=keys.dois, arxiv_ids=keys.arxiv_ids,
                      excluded=list(excluded))
    return (PaperRecord.from_row(rows[0]), rows[0]["matched_by"]) if rows else None


def find_by_title(graph: Graph, title: str, year: int | None,
                  excluded: Sequence[str]) -> tuple[PaperRecord, str] | None:
    words = escape_lucene(" ".join(normalise_title(title).split()))
    if not words:
        return None
    for record, _ in fulltext_records(graph, f"title:({words})", TITLE_CANDIDATES, excluded):
        same = normalise_title(record.title) == normalise_title(title)
        similarity = title_similarity(record.title, title)
        if not same and similarity < TITLE_MATCH:
            continue
        if year is not None and record.year is not None and abs(year - record.year) > 1:
            continue
        return record, "title" if same else f"title (overlap {similarity:.2f})"
    return None


def resolve_in_corpus(graph: Graph, record: PaperRecord,
                      excluded: Sequence[str]) -> tuple[PaperRecord, str] | None:
    """The corpus record of the same work (identifier first, then title), or None."""
    return (find_by_identifier(graph, record.doi, record.arxiv_id, excluded)
            or find_by_title(graph, record.title, record.year, excluded))


# --- recalled titles --------------------------------------------------------------------


def resolve_recalled(
    graph: Graph,
    registry: IdentityRegistry,
    outcome: RecallOutcome,
    excluded: Sequence[str],
    client: ProviderClient | None,
    statuses: dict[str, ProviderStatus],
) -> RouteReport:
    """Each recalled title resolved, verified where a provider answers, or left a hypothesis."""
    if outcome.status != "recalled":
        return RouteReport("recalled", "skipped" if outcome.status == "skipped" else "failed",
                           f"{outcome.backend}: {outcome.reason}")
    report = RouteReport("recalled", "ran")
    touched: set[int] = set()
    for index, title in enumerate(outcome.titles):
        hypothesis = PaperRecord(id=None, title=title.title, year=title.year, doi=title.doi,
                                 arxiv_id=title.arxiv_id, venue=title.venue, source="recalled")
        entry: dict[str, Any] = {"index": index, "recalled": asdict(title)}
        entry["verification"] = verify_with_providers(hypothesis, client, statuses)
        found = resolve_in_corpus(graph, hypothesis, excluded)
        record: PaperRecord | None
        if found is not None:
            record, matched_by = found
            entry["resolution"] = f"resolved in the corpus by {matched_by}: {record.id}"
        else:
            record = _verified_record(entry["verification"])
            entry["resolution"] = (f"not in the corpus; verified by {record.source}"
                                   if record is not None else
                                   "unresolved: not found in the corpus, no provider verified it;"
                                   " kept as a hypothesis only")
        if record is not None:
            hit = RouteHit("recalled", {"index": index, "recalled_title": title.title,
                                        "resolution": entry["resolution"]})
            work = registry.add(record, hit)
            if work is not None:
                touched.add(id(work))
                entry["work_id"] = work.work_id
            report.records += 1
        report.details.append(entry)
    report.works = len(touched)
    return report


def verify_with_providers(hypothesis: PaperRecord, client: ProviderClient | None,
                          statuses: dict[str, ProviderStatus]) -> dict[str, Any]:
    """Crossref for a DOI, arXiv for an arXiv id; each says verified, mismatch, not found,
    failed or skipped (with the reason)."""
    checks: dict[str, Any] = {}
    for name, key, fetch in (("crossref", normalise_doi(hypothesis.doi), crossref_record),
                             ("arxiv", normalise_arxiv_id(hypothesis.arxiv_id), arxiv_record)):
        if not key:
            checks[name] = {"status": "skipped", "reason": "no identifier to check"}
        elif client is None or not statuses.get(name, _missing(name)).available:
            checks[name] = {"status": "skipped",
                            "reason": statuses.get(name, _missing(name)).detail}
        else:
            try:
                found = fetch(client, key)
            except ProviderError as err:
                checks[name] = {"status": "failed", "reason": describe_error(err)}
                continue
            checks[name] = _compare(hypothesis, found)
    return checks


def _compare(hypothesis: PaperRecord, found: PaperRecord | None) -> dict[str, Any]:
    if found is None:
        return {"status": "not_found", "reason": "the provider does not know the identifier"}
    similarity = title_similarity(hypothesis.title, found.title)
    status = "verified" if similarity >= TITLE_MATCH else "mismatch"
    return {"status": status, "title": found.title, "year": found.year,
            "title_overlap": round(similarity, 3), "record": asdict(found)}


def _verified_record(checks: dict[str, Any]) -> PaperRecord | None:
    for check in checks.values():
        if check.get("status") == "verified":
            return PaperRecord(**check["record"])
    return None


def _missing(name: str) -> ProviderStatus:
    return ProviderStatus(name, False, "not probed", "")


# --- Semantic Scholar search ------------------------------------------------------------


def search_provider(
    graph: Graph,
    registry: IdentityRegistry,
    queries: Sequence[str],
    limit: int,
    excluded: Sequence[str],
    settings: ProviderSettings | None,
    status: ProviderStatus,
    route: RouteName = "semantic_scholar_search",
) -> RouteReport:
    """The generated queries against a provider's search (Semantic Scholar, or OpenAlex
    with `route="openalex_search"`), each hit resolved against the corpus."""
    if settings is None or not status.available:
        return RouteReport(route, "skipped", f"{status.name} {status.detail}")
    report = RouteReport(route, "ran")
    touched: set[int] = set()
    failures = 0
    search = search_openalex if route == "openalex_search" else search_semantic_scholar
    outcomes = search(settings, queries, limit)
    for index, (query, outcome) in enumerate(zip(queries, outcomes, strict=True)):
        if isinstance(outcome, ProviderError):
            failures += 1
            report.details.append({"query_index": index, "query": query,
                                   "error": describe_error(outcome)})
            continue
        report.details.append({"query_index": index, "query": query, "hits": len(outcome)})
        for rank, record in enumerate(outcome, start=1):
            work = add_provider_record(graph, registry, record, excluded, RouteHit(
                route, {"query_index": index, "query": query, "rank": rank,
                        "s2_id": record.s2_id}))
            if work is not None:
                touched.add(id(work))
            report.records += 1
    report.works = len(touched)
    if failures:
        report.status = "failed" if failures == len(queries) else "partial"
        report.reason = f"{failures} of {len(queries)} provider searches failed"
    return report


def add_provider_record(graph: Graph, registry: IdentityRegistry, record: PaperRecord,
                        excluded: Sequence[str], hit: RouteHit) -> Any:
    """Register a provider record: as its corpus version when it resolves, else external.
    The provider record is kept as a version either way (its abstract may be the only one)."""
    found = resolve_in_corpus(graph, record, excluded)
    if found is not None:
        corpus_record, matched_by = found
        hit = RouteHit(hit.route, {**hit.detail, "resolved_by": matched_by})
        work = registry.add(corpus_record, hit)
        if work is not None and record.has_abstract and not corpus_record.has_abstract:
            registry.add(record, hit)
        return work
    return registry.add(record, RouteHit(hit.route, {**hit.detail, "resolved_by": None}))
