"""The OpenAlex works snapshot (`data/works/updated_date=*/part_*.gz`, one Work object a
line) staged as a corpus of our own format (see `crase.ingest.staging`).

A Work becomes a Paper: `id` (the graph id by `paper_key`: its arXiv id, else its DOI,
else `openalex:W...`), `title` (or `display_name`), `publication_year`,
`publication_date`, the `display_name` of each `authorships[].author`, the abstract
rebuilt from `abstract_inverted_index` (word -> positions; an odd position, such as -1,
3.0 or true, is placed or dropped as `read_position` says, and noted), `doi`, the arXiv id that a
location's landing page or PDF URL on arxiv.org, or an arXiv DOI (10.48550/arXiv.*),
gives, and the venue from `primary_location.source.display_name`. `referenced_works`
are its citations. One pass over the shards: kept works' references are spilled to disk
and resolved against the kept set once it is complete.
"""

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crase.ingest.corpus import paper_from_record
from crase.ingest.dataset_filter import OPENALEX_PREFIX, DatasetFilter
from crase.ingest.records import EdgeRow, Limits, Paper, json_kind
from crase.ingest.staging import (
    DatasetPaths,
    Shard,
    SpillFile,
    Staging,
    StagingReport,
    edges_in_batches,
    find_dataset_shards,
    read_records,
    run_staging,
)
from crase.paper_identity import normalise_arxiv_id, paper_key

ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#\s]+)", re.IGNORECASE)
ARXIV_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/)?10\.48550/arxiv\.(.+)$",
                       re.IGNORECASE)
TOPIC_PARTS = ("subfield", "field", "domain")
ABSTRACT_POSITIONS = "abstract_positions"  # the notes file's kind for odd index positions


def stage_openalex(paths: DatasetPaths, folder: Path, dataset_filter: DatasetFilter,
                   limits: Limits, max_line_bytes: int,
                   show_progress: bool = False) -> StagingReport:
    """Stage the works under `paths` (shards or folders of them) into `folder`."""
    shards = find_dataset_shards(paths)
    return run_staging(folder, dataset_filter, shards, (limits, max_line_bytes), show_progress,
                       lambda staging: stage_works(shards, staging, limits, max_line_bytes))


def stage_works(shards: list[Shard], staging: Staging, limits: Limits,
                max_line_bytes: int) -> None:
    with SpillFile(staging.folder / "references.spill.jsonl") as spill:
        for shard, number, text, record in read_records(shards, staging, max_line_bytes):
            work = record if isinstance(record, dict) else {}
            labels = work_labels(work)
            if work and staging.filter.leaves_out_early(work.get("publication_year"), labels):
                staging.leave_out()
                continue
            notes: list[str] = []
            paper = paper_from_record(map_work(work, notes) if work else record, text,
                                      shard.name, number, limits)
            if notes and isinstance(paper, Paper):
                paper.repairs.setdefault(ABSTRACT_POSITIONS, []).extend(notes)
            own_id = short_id(work.get("id")) or ""
            if staging.offer(shard.name, number, paper, own_id, labels):
                references = work_references(work)
                if references:
                    spill.write([own_id, shard.name, number, references])
        for file, rows in edges_in_batches(in_corpus_edges(spill, staging)):
            staging.add_edges(file, rows)


def in_corpus_edges(spill: SpillFile, staging: Staging) -> Iterator[tuple[str, EdgeRow]]:
    for citing, file, line, references in spill.rows():
        for reference in references:
            ends = staging.in_corpus(citing, reference)
            if ends is not None:
                yield file, EdgeRow(line, *ends)


def map_work(work: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    """A Work in the field names of `Paper`; missing fields stay missing, so the Paper
    checks report them (a Work without a title is a `missing_title`). What was done with
    odd abstract positions is appended to `notes`."""
    own_id = short_id(work.get("id"))
    doi = work.get("doi") or text_at(work, "ids", "doi")
    arxiv_id = work_arxiv_id(work)
    return {
        "id": paper_key(arxiv_id, doi if isinstance(doi, str) else None,
                        f"openalex:{own_id}") if own_id else None,
        "title": work.get("title") or work.get("display_name"),
        "abstract": rebuild_abstract(work.get("abstract_inverted_index"), notes),
        "year": work.get("publication_year"),
        "date": work.get("publication_date"),
        "authors": author_names(work),
        "doi": doi,
        "arxiv_id": arxiv_id,
        "venue": text_at(work, "primary_location", "source", "display_name"),
    }


def short_id(value: Any) -> str | None:
    """`W2741809807` of `https://openalex.org/W2741809807` (either spelling given)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip().removeprefix(OPENALEX_PREFIX)


def text_at(record: Any, *path: str) -> str | None:
    """The text at a path of nested objects, or None where any step is missing or null."""
    for step in path:
        record = record.get(step) if isinstance(record, dict) else None
    return record if isinstance(record, str) else None


def rebuild_abstract(index: Any, notes: list[str] | None = None) -> str:
    """The abstract, word for word, from OpenAlex's inverted index ({word: [positions]}).
    Older snapshots wrote the index as a JSON string; both are read. What is done with an
    odd position is appended to `notes` (see `read_position`)."""
    if isinstance(index, str):
        try:
            index = json.loads(index)
        except ValueError:
            return ""
    if not isinstance(index, dict):
        return ""
    placed = []
    for word, positions in index.items():
        alone = not isinstance(positions, list)
        for given in [positions] if alone else positions:
            position, why = read_position(given, alone)
            if position is not None:
                placed.append((position, word))
            if why is not None and notes is not None:
                notes.append(f"{word!r} at {given!r}: {why}")
    placed.sort()
    return " ".join(word for _, word in placed)


def read_position(given: Any, alone: bool) -> tuple[int | None, str | None]:
    """Where a word goes, and (for an odd position) what was done with it: a whole number
    written with a fraction (3.0) or given without its list is placed; a negative one, a
    fraction (2.5), a boolean (true: no position, though Python counts it as 1) and
    anything else are dropped."""
    if isinstance(given, bool):
        return None, "a boolean, no position; dropped"
    if isinstance(given, float):
        if not (math.isfinite(given) and given.is_integer()):
            return None, "not a whole number; dropped"
        if given < 0:
            return None, "a negative position; dropped"
        return int(given), f"a whole number written with a fraction; placed at {int(given)}"
    if not isinstance(given, int):
        return None, f"{'null' if given is None else 'a ' + json_kind(given)}, no position; " \
            "dropped"
    if given < 0:
        return None, "a negative position; dropped"
    return given, (f"a position not in a list; placed at {given}" if alone else None)


def author_names(work: dict[str, Any]) -> list[str]:
    authorships = work.get("authorships")
    if not isinstance(authorships, list):
        return []
    names = (text_at(authorship, "author", "display_name") for authorship in authorships)
    return [name for name in names if name]


def work_arxiv_id(work: dict[str, Any]) -> str | None:
    """The arXiv id of a Work: from an arXiv DOI, or a location on arxiv.org."""
    for doi in (work.get("doi"), text_at(work, "ids", "doi")):
        match = ARXIV_DOI.match(doi) if isinstance(doi, str) else None
        if match:
            return normalise_arxiv_id(match.group(1))
    locations = work.get("locations")
    candidates = (locations if isinstance(locations, list) else []) + [
        work.get("primary_location"), work.get("best_oa_location")]
    for location in candidates:
        for url_field in ("landing_page_url", "pdf_url"):
            url = text_at(location, url_field)
            match = ARXIV_URL.search(url) if url else None
            if match:
                return normalise_arxiv_id(match.group(1))
    return None


def work_labels(work: dict[str, Any]) -> list[str]:
    """What OpenAlex files a Work under: its concepts, its topics and their subfields,
    fields and domains (display names), for the field filter."""
    labels = []
    concepts = work.get("concepts")
    for concept in concepts if isinstance(concepts, list) else []:
        labels.append(text_at(concept, "display_name"))
    topics = work.get("topics")
    for topic in (topics if isinstance(topics, list) else []) + [work.get("primary_topic")]:
        labels.append(text_at(topic, "display_name"))
        labels.extend(text_at(topic, part, "display_name") for part in TOPIC_PARTS)
    return [label for label in labels if label]


def work_references(work: dict[str, Any]) -> list[str]:
    references = work.get("referenced_works")
    if not isinstance(references, list):
        return []
    ids = (short_id(reference) for reference in references)
    return [reference for reference in ids if reference]
