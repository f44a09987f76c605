"""Identity resolution and de-duplication: every record a route finds becomes part of one
work, and versions of one work merge.

Rules, in order, for an incoming record:
1. the same corpus Paper id, DOI or arXiv id (version suffix dropped) as a known work: the
   same work. When the titles disagree (word overlap below 0.5) the identifier is
   contradicted: the work is flagged as an identity conflict, kept out of the shortlist,
   and logged.
2. the same normalised title and publication years at most one apart (a preprint and its
   published version), with no contradicting identifiers: the same work.
3. otherwise a new work. A record whose title is *similar* to a known work's (overlap of
   at least 0.8, but not the same title) or the same title more than a year apart stays a
   distinct work, with a note: a predecessor or follow-up is not the same work.

Publication-year eligibility is applied per work: eligible when any version's year is in
range; a work with no known year is kept (its eligibility cannot be checked) and says so.
"""

import hashlib
from dataclasses import dataclass, field
from typing import Any

from crase.idea.candidates import Candidate, Decision, RouteHit
from crase.ingest.records import PaperRecord
from crase.paper_identity import (
    ARXIV_DOI_PREFIX,
    arxiv_key,
    normalise_doi,
    normalise_title,
    title_similarity,
)

ARXIV_DOI = ARXIV_DOI_PREFIX
SAME_TITLE_YEARS = 1  # a preprint and its publication are usually at most a year apart
CONFLICT_BELOW = 0.5  # title word overlap under which an identifier match is contradicted
SIMILAR_FROM = 0.8  # title word overlap from which a distinct work gets a note


@dataclass
class IdentityRegistry:
    excluded: frozenset[str] = frozenset()
    works: list[Candidate] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    _by_corpus_id: dict[str, Candidate] = field(default_factory=dict)
    _by_doi: dict[str, Candidate] = field(default_factory=dict)
    _by_arxiv: dict[str, Candidate] = field(default_factory=dict)
    _by_title: dict[str, list[Candidate]] = field(default_factory=dict)

    def add(self, record: PaperRecord, hit: RouteHit) -> Candidate | None:
        """The work this record belongs to (new or existing), with the route added.
        None for a record of an excluded paper."""
        if record.id is not None and record.id in self.excluded:
            return None
        record.doi = normalise_doi(record.doi)
        record.arxiv_id = arxiv_key(record.arxiv_id, record.doi)
        work, conflict = self._match_identifier(record)
        if conflict is not None:
            work = None  # a contradicted identifier merges nothing
        else:
            work = work or self._match_title(record)
        if work is not None:
            work = self._merge_bridged(work, record)
        if work is None:
            work = Candidate(work_id="", records=[record])
            self.works.append(work)
            self._note_similar_titles(work, record)
            if conflict is not None:
                work.identity_conflict = True
                work.identity_notes.append(conflict)
        elif not _contains(work, record):
            work.records.append(record)
            if work.records[0] is not record:
                self._log("merged", work, f"{describe(record)} is a version of this work")
        self._index(work, record)
        work.add_route(hit)
        work.work_id = self._unique_id(work)
        return work

    def _unique_id(self, work: Candidate) -> str:
        """work_id(work), with a suffix when another work already holds that id (two
        external works with the same title, years apart)."""
        base = work_id(work)
        taken = {other.work_id for other in self.works if other is not work}
        candidate, number = base, 1
        while candidate in taken:
            number += 1
            candidate = f"{base}~{number}"
        return candidate

    def get(self, corpus_id: str) -> Candidate | None:
        return self._by_corpus_id.get(corpus_id)

    def _match_identifier(self, record: PaperRecord) -> tuple[Candidate | None, str | None]:
        """The work an identifier names, and a conflict note when the titles disagree (then
        both works are flagged and the record becomes a work of its own)."""
        keys = [("corpus id", record.id, self._by_corpus_id), ("DOI", record.doi, self._by_doi),
                ("arXiv id", record.arxiv_id, self._by_arxiv)]
        for label, key, index in keys:
            work = index.get(key) if key else None
            if work is None:
                continue
            if label != "corpus id" and _contradicts(work, record):
                work.identity_conflict = True
                note = (f"identity conflict: {label} {key} is shared by {describe(record)} and "
                        f"{describe(work.primary)}, whose titles differ")
                work.identity_notes.append(note)
                self._log("conflict", work, note)
                return work, note
            return work, None
        return None, None

    def _merge_bridged(self, work: Candidate, record: PaperRecord) -> Candidate:
        """A record whose identifiers point at two known works proves they are one work
        (a DOI on one version, an arXiv id on the other): merge the second into the first."""
        for key, index in ((record.doi, self._by_doi), (record.arxiv_id, self._by_arxiv)):
            other = index.get(key) if key else None
            if other is None or other is work or _contradicts(work, other.primary):
                continue
            self._log("merged", work, f"{describe(other.primary)} is a version of this work "
                                      f"(identifier {key} links them)")
            for moved in other.records:
                if not _contains(work, moved):
                    work.records.append(moved)
            for hit in other.routes:
                work.add_route(hit)
            work.identity_notes.extend(other.identity_notes)
            for stage in ("selection", "assessment", "gate"):
                if getattr(work, stage) is None:
                    setattr(work, stage, getattr(other, stage))
            self.works.remove(other)
            for table in (self._by_corpus_id, self._by_doi, self._by_arxiv):
                for name, value in list(table.items()):
                    if value is other:
                        table[name] = work
            for bucket in self._by_title.values():
                if other in bucket:
                    bucket.remove(other)
                    if work not in bucket:
                        bucket.append(work)
        return work

    def _match_title(self, record: PaperRecord) -> Candidate | None:
        title = normalise_title(record.title)
        for work in self._by_title.get(title, []):
            reason = _version_blocker(work, record)
            if reason is None:
                return work
            note = f"same title as {describe(record)} but kept distinct: {reason}"
            if note not in work.identity_notes:
                work.identity_notes.append(note)
                self._log("distinct", work, note)
        return None

    def _note_similar_titles(self, work: Candidate, record: PaperRecord) -> None:
        for other in self.works:
            if other is work:
                continue
            similarity = title_similarity(other.primary.title, record.title)
            if SIMILAR_FROM <= similarity < 1.0:
                note = (f"title similar to {describe(other.primary)} (overlap {similarity:.2f}) "
                        "but not the same: kept as a distinct work (predecessor or follow-up)")
                work.identity_notes.append(note)
                self._log("distinct", work, note)

    def _index(self, work: Candidate, record: PaperRecord) -> None:
        if record.id is not None:
            self._by_corpus_id.setdefault(record.id, work)
        if record.doi:
            self._by_doi.setdefault(record.doi, work)
        if record.arxiv_id:
            self._by_arxiv.setdefault(record.arxiv_id, work)
        bucket = self._by_title.setdefault(normalise_title(record.title), [])
        if work not in bucket:
            bucket.append(work)

    def _log(self, event: str, work: Candidate, note: str) -> None:
        self.log.append({"event": event, "work": work_id(work), "note": note})


def _contains(work: Candidate, record: PaperRecord) -> bool:
    if record.id is not None:
        return record.id in work.corpus_ids
    return any(existing is record or (existing.id is None and existing.source == record.source
                                      and existing.title == record.title)
               for existing in work.records)


def _contradicts(work: Candidate, record: PaperRecord) -> bool:
    return title_similarity(work.primary.title, record.title) < CONFLICT_BELOW


def _version_blocker(work: Candidate, record: PaperRecord) -> str | None:
    """Why two records with the same title are not versions of one work; None if they are."""
    years = [r.year for r in work.records if r.year is not None]
    if record.year is not None and years:
        gap = min(abs(record.year - year) for year in years)
        if gap > SAME_TITLE_YEARS:
            return f"years {sorted(set(years))} and {record.year} are {gap} apart"
    dois = {r.doi for r in work.records if r.doi and not r.doi.startswith(ARXIV_DOI)}
    if record.doi and not record.doi.startswith(ARXIV_DOI) and dois and record.doi not in dois:
        return f"different DOIs {sorted(dois)} and {record.doi}"
    arxiv = {r.arxiv_id for r in work.records if r.arxiv_id}
    if record.arxiv_id and arxiv and record.arxiv_id not in arxiv:
        return f"different arXiv ids {sorted(arxiv)} and {record.arxiv_id}"
    return None


def work_id(work: Candidate) -> str:
    """The corpus id of the work's first corpus record, else a stable external key."""
    corpus = [record.id for record in work.records if record.id is not None]
    if corpus:
        return corpus[0]
    record = work.records[0]
    if record.doi:
        return f"doi:{record.doi}"
    if record.arxiv_id:
        return f"arxiv:{record.arxiv_id}"
    if record.s2_id:
        return f"s2:{record.s2_id}"
    digest = hashlib.sha256(normalise_title(record.title).encode()).hexdigest()[:12]
    return f"title:{digest}"


def describe(record: PaperRecord) -> str:
    name = record.id or record.doi or record.arxiv_id or record.s2_id or "external record"
    return f"{name} ({record.title[:60]!r}, {record.year or 'year unknown'})"


def apply_eligibility(work: Candidate, year_min: int | None, year_max: int | None) -> None:
    """Publication-year eligibility: any version in range keeps the work."""
    if year_min is None and year_max is None:
        work.eligibility = Decision(True, "eligible: no year range requested")
        return
    low, high = year_min or 0, year_max or 9999
    window = f"{year_min or '...'}-{year_max or '...'}"
    years = sorted({r.year for r in work.records if r.year is not None})
    if not years:
        work.eligibility = Decision(True, f"year unknown: kept, eligibility for {window} "
                                          "cannot be checked")
    elif any(low <= year <= high for year in years):
        work.eligibility = Decision(True, f"eligible: year {years} within {window}")
    else:
        work.eligibility = Decision(False, f"excluded: year {years} outside {window}")
