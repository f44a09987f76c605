"""The Semantic Scholar Academic Graph datasets staged as a corpus of our own format (see
`crase.ingest.staging`): a folder with the `papers/`, `abstracts/` (optional) and
`citations/` (optional) datasets, each a set of gzipped JSON-lines shards as the datasets
API hands them out.

Every corpus id (`corpusid`, `citingcorpusid`, `citedcorpusid`) is read as an integer or a
string of digits: AI2's published samples write the citations' ids as JSON strings
(`"citingcorpusid":"20187272"`) and the papers' and abstracts' as integers. A row whose id
is neither is refused (`bad_id`) with the field named.

- papers: `corpusid`, `externalids` (`DOI`, `ArXiv`, ...), `url` (whose last segment is
  the paper id the API uses), `title`, `authors` (`authorId`, `name`), `year`, `venue`,
  `publicationdate`, `s2fieldsofstudy` (`category`, `source`: the field filter's labels).
- abstracts: `corpusid`, `abstract`. An abstract joined to no kept paper (its work is not
  in the papers shards, the filter left it out, or it repeats an earlier row) is counted
  in the summary (`abstracts_unjoined`); a row that cannot be joined at all (no readable
  id, an abstract that is not text, a line that is no object) is a reject.
- citations: `citingcorpusid`, `citedcorpusid` (null where the reference is not resolved
  to a paper), `isinfluential`, `intents`: flat (`["background","methodology"]`, as the
  published samples write it) or one list per citation context (`[["methodology"],
  null]`, as the documentation describes it), of `background`, `methodology`, `result`.
  The edge keeps `isinfluential` and the intents it was cited with (each once), written
  after the load (`citation_signals`).

Graph ids by `paper_key`: the arXiv id, else the DOI, else `s2:<paper id>` (the id `crase
fetch` gives a paper from the API), else `s2corpus:<corpusid>`.

Three passes, so the abstract is known when a paper is checked and filtered: the papers
that pass every filter but the abstract's are spilled to disk with their corpus ids held
(a set of ints, about 70 bytes each); their abstracts are put in an SQLite table on disk;
then the spilled papers are checked whole and kept. Citations stream last, against the
kept set.
"""

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from crase.errors import CorpusError
from crase.graph import Graph
from crase.ingest.corpus import SHOWN_CHARS, paper_from_record
from crase.ingest.dataset_filter import DatasetFilter
from crase.ingest.records import EdgeRow, Limits, Paper, Reject, RejectKind, json_kind, shown_value
from crase.ingest.staging import (
    DatasetPaths,
    Shard,
    SpillFile,
    Staging,
    StagingReport,
    as_paths,
    dataset_root,
    edges_in_batches,
    find_shards,
    read_records,
    run_staging,
)
from crase.paper_identity import normalise_arxiv_id, paper_key

DATASETS = ("papers", "abstracts", "citations")
PAPER_URL = "https://www.semanticscholar.org/paper/"
SQLITE_CHUNK = 10_000
# Corpus ids are SQLite INTEGER keys (signed 64 bits); real ones have nine digits.
MAX_CORPUS_ID = 1 << 63
MAX_CORPUS_ID_DIGITS = 18
SIGNAL_BATCH = 10_000  # edges per transaction of store_citation_signals
# The signals as neo4j-admin columns of the relationship file (see citation_signals).
SIGNAL_COLUMNS = [("isinfluential", "isinfluential:boolean"), ("intents", "intents:string[]")]


def stage_s2ag(paths: DatasetPaths, folder: Path, dataset_filter: DatasetFilter,
               limits: Limits, max_line_bytes: int, show_progress: bool = False
               ) -> StagingReport:
    """Stage the datasets under `paths` (folders holding papers/, abstracts/, citations/)
    into `folder`."""
    datasets = locate_datasets(paths)
    shards = [shard for name in DATASETS for shard in datasets[name]]
    return run_staging(folder, dataset_filter, shards, (limits, max_line_bytes), show_progress,
                       lambda staging: stage_datasets(datasets, staging, limits,
                                                      max_line_bytes))


def stage_datasets(datasets: dict[str, list[Shard]], staging: Staging, limits: Limits,
                   max_line_bytes: int) -> None:
    with SpillFile(staging.folder / "papers.spill.jsonl") as spill:
        candidates = spill_candidates(datasets["papers"], staging, spill, limits,
                                      max_line_bytes)
        with AbstractStore(staging.folder / "abstracts.sqlite") as abstracts:
            abstracts.fill(datasets["abstracts"], candidates, staging, max_line_bytes)
            del candidates
            keep_candidates(spill, abstracts, staging, limits)
    for file, rows, signals in citation_batches(datasets["citations"], staging,
                                                max_line_bytes):
        staging.add_edges(file, rows, signals)


def locate_datasets(paths: DatasetPaths) -> dict[str, list[Shard]]:
    """Each dataset's shards over the folders given (a download may be split over several),
    named by their path under the folder that holds them all."""
    folders = as_paths(paths)
    if not any((folder / "papers").is_dir() for folder in folders):
        raise CorpusError(f"no papers/ folder in {', '.join(map(str, folders))}: give the "
                          "folder that holds the datasets' papers/, abstracts/ and "
                          "citations/ folders")
    root = dataset_root(folders)
    return {name: [shard for folder in folders if (folder / name).is_dir()
                   for shard in find_shards((folder / name).resolve() if root else folder / name,
                                            root or folder)]
            for name in DATASETS}


def spill_candidates(shards: list[Shard], staging: Staging, spill: SpillFile,
                     limits: Limits, max_line_bytes: int) -> set[int]:
    """Pass 1: papers that are valid and pass every filter but the abstract's, spilled;
    their corpus ids returned."""
    before_abstract = replace(staging.filter, require_abstract=False)
    candidates: set[int] = set()
    for shard, number, text, record in read_records(shards, staging, max_line_bytes,
                                                    "papers"):
        if isinstance(record, dict) and staging.filter.leaves_out_early(
                record.get("year"), paper_labels(record)):
            staging.leave_out()
            continue
        paper_fields = map_paper(record) if isinstance(record, dict) else record
        paper = paper_of_record(record, paper_fields, text, shard.name, number, limits)
        if isinstance(paper, Reject):
            staging.offer(shard.name, number, paper, "", [])
            continue
        corpus_id, labels = corpus_number(record["corpusid"]), paper_labels(record)
        assert corpus_id is not None  # paper_of_record refused any other row
        if not before_abstract.keeps(paper, str(corpus_id), labels):
            staging.leave_out()
            continue
        candidates.add(corpus_id)
        spill.write([shard.name, number, corpus_id, labels, paper_fields])
    return candidates


def paper_of_record(record: Any, paper_fields: Any, text: str, file: str, number: int,
                    limits: Limits) -> Paper | Reject:
    """The Paper of a papers-dataset record (`paper_fields`: its `map_paper`; no abstract
    yet), or its reject."""
    given = record.get("corpusid") if isinstance(record, dict) else None
    if given is not None and corpus_number(given) is None:
        return Reject(file, number, RejectKind.BAD_ID, unreadable_id_reason("corpusid", given),
                      text[:SHOWN_CHARS])
    return paper_from_record(paper_fields, text, file, number, limits)


def keep_candidates(spill: SpillFile, abstracts: "AbstractStore", staging: Staging,
                    limits: Limits) -> None:
    """Pass 3: each spilled paper with its abstract, checked whole and offered."""
    for file, line, corpus_id, labels, paper_fields in spill.rows():
        paper_fields["abstract"] = abstracts.get(corpus_id)
        text = json.dumps(paper_fields, ensure_ascii=False)
        paper: Paper | Reject = paper_from_record(paper_fields, text, file, line, limits)
        staging.offer(file, line, paper, str(corpus_id), labels)


def map_paper(record: dict[str, Any]) -> dict[str, Any]:
    """A papers-dataset record in the field names of `Paper` (no abstract yet)."""
    external = record.get("externalids")
    external = external if isinstance(external, dict) else {}
    doi, arxiv = external.get("DOI"), external.get("ArXiv")
    arxiv_id = normalise_arxiv_id(arxiv) if isinstance(arxiv, str) else None
    s2_id = paper_id_of(record.get("url"))
    corpus_id = corpus_number(record.get("corpusid"))
    own_id = f"s2:{s2_id}" if s2_id else f"s2corpus:{corpus_id}"
    has_id = corpus_id is not None
    return {
        "id": paper_key(arxiv_id, doi if isinstance(doi, str) else None, own_id)
        if has_id else None,
        "title": record.get("title"),
        "year": record.get("year"),
        "date": record.get("publicationdate"),
        "venue": record.get("venue") or None,
        "authors": author_names(record.get("authors")),
        "doi": doi,
        "arxiv_id": arxiv_id,
        "s2_id": s2_id,
    }


def paper_id_of(url: Any) -> str | None:
    if isinstance(url, str) and url.startswith(PAPER_URL):
        return url.removeprefix(PAPER_URL).strip("/") or None
    return None


def author_names(authors: Any) -> list[str]:
    if not isinstance(authors, list):
        return []
    names = (author.get("name") for author in authors if isinstance(author, dict))
    return [name for name in names if isinstance(name, str) and name]


def paper_labels(record: dict[str, Any]) -> list[str]:
    fields = record.get("s2fieldsofstudy")
    categories = (field.get("category") for field in fields if isinstance(field, dict)) \
        if isinstance(fields, list) else ()
    return sorted({category for category in categories if isinstance(category, str)})


class AbstractStore:
    """The abstracts of the candidate papers, in an SQLite table on disk (pass 2)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.unlink(missing_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE abstracts (corpusid INTEGER PRIMARY KEY, abstract TEXT)")

    def __enter__(self) -> "AbstractStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)

    def fill(self, shards: list[Shard], candidates: set[int], staging: Staging,
             max_line_bytes: int) -> None:
        rows: list[tuple[int, str]] = []
        for shard, number, text, record in read_records(shards, staging, max_line_bytes,
                                                        "abstracts"):
            joinable = abstract_of_record(record, text, shard.name, number)
            if isinstance(joinable, Reject):
                staging.reject(joinable)
            elif joinable is not None and joinable[0] in candidates:
                rows.append(joinable)
                if len(rows) >= SQLITE_CHUNK:
                    self.insert(rows, staging)
                    rows = []
            else:
                staging.report.abstracts_unjoined += 1
        self.insert(rows, staging)

    def insert(self, rows: list[tuple[int, str]], staging: Staging) -> None:
        # The first abstract of a paper is kept, as the first row of a repeated id is.
        inserted = self.db.executemany("INSERT OR IGNORE INTO abstracts VALUES (?, ?)",
                                       rows).rowcount
        self.db.commit()
        staging.report.abstracts_joined += inserted
        staging.report.abstracts_unjoined += len(rows) - inserted

    def get(self, corpus_id: int) -> str:
        row = self.db.execute("SELECT abstract FROM abstracts WHERE corpusid = ?",
                              (corpus_id,)).fetchone()
        return row[0] if row else ""


def abstract_of_record(record: Any, text: str, file: str,
                       number: int) -> tuple[int, str] | Reject | None:
    """(corpus id, abstract) of an abstracts-dataset row; None for a row with no abstract
    (null); the reject of a row that cannot be joined to any paper."""
    shown = text[:SHOWN_CHARS]
    if not isinstance(record, dict):
        return Reject(file, number, RejectKind.NOT_AN_OBJECT,
                      f"expected a JSON object, got {type(record).__name__}", shown)
    given = record.get("corpusid")
    corpus_id = corpus_number(given)
    if corpus_id is None:
        return Reject(file, number, RejectKind.BAD_ID, unreadable_id_reason("corpusid", given),
                      shown)
    abstract = record.get("abstract")
    if abstract is not None and not isinstance(abstract, str):
        return Reject(file, number, RejectKind.INVALID_FIELD,
                      f"abstract is a {json_kind(abstract)}, not text", shown)
    return (corpus_id, abstract) if abstract is not None else None


def citation_batches(shards: list[Shard], staging: Staging, max_line_bytes: int,
                     ) -> Iterator[tuple[str, list[EdgeRow], dict[int, dict[str, Any]]]]:
    """Batches of in-corpus citations per shard, with each row's signals by line."""
    # By shard and line: a batch is handed on once the next row (perhaps another shard's,
    # with the same line number) has been read.
    signals: dict[tuple[str, int], dict[str, Any]] = {}

    def in_corpus() -> Iterator[tuple[str, EdgeRow]]:
        for shard, number, text, record in read_records(shards, staging, max_line_bytes,
                                                        "citations"):
            ids = citation_ids(record, text, shard.name, number)
            if isinstance(ids, Reject):
                staging.reject(ids)
                continue
            ends = staging.in_corpus(*ids)
            if ends is not None:
                signals[shard.name, number] = citation_signals(record)
                yield shard.name, EdgeRow(number, *ends)

    for file, rows in edges_in_batches(in_corpus()):
        batch_signals = {row.line: signals.pop((file, row.line)) for row in rows}
        yield file, rows, batch_signals


def citation_ids(record: Any, text: str, file: str,
                 number: int) -> tuple[str, str | None] | Reject:
    """The corpus ids of a citations-dataset row as the kept set names them (the cited one
    None where the reference is unresolved), or the reject of a row without them."""
    shown = text[:SHOWN_CHARS]
    if not isinstance(record, dict):
        return Reject(file, number, RejectKind.NOT_AN_OBJECT,
                      f"expected a JSON object, got {type(record).__name__}", shown)
    citing, cited = record.get("citingcorpusid"), record.get("citedcorpusid")
    citing_key, cited_key = corpus_key(citing), corpus_key(cited)
    if citing_key is None:
        return Reject(file, number, RejectKind.BAD_ID,
                      unreadable_id_reason("citingcorpusid", citing), shown)
    if cited is not None and cited_key is None:
        return Reject(file, number, RejectKind.BAD_ID,
                      unreadable_id_reason("citedcorpusid", cited), shown)
    return citing_key, cited_key


def corpus_number(value: Any) -> int | None:
    """A corpus id as an int: given as a JSON integer or as a string of digits (the
    published samples use both); None for anything else (null, a fraction, a boolean)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 <= value < MAX_CORPUS_ID else None
    if isinstance(value, str) and 0 < len(value) <= MAX_CORPUS_ID_DIGITS \
            and value.isascii() and value.isdigit():
        return int(value)
    return None


def corpus_key(value: Any) -> str | None:
    """A corpus id as the kept set names it (decimal, no leading zeros), or None."""
    number = corpus_number(value)
    return None if number is None else str(number)


def unreadable_id_reason(field: str, value: Any) -> str:
    if value is None:
        return f"{field} is missing; every row names its paper by corpus id"
    return (f"{field} {shown_value(value)} is no corpus id: an integer or a string of "
            "digits")


def citation_signals(record: dict[str, Any]) -> dict[str, Any]:
    """`isinfluential` (null where not given) and the intents, each once, in order:
    `intents` flat or one list per context (null entries skipped)."""
    intents: list[str] = []
    contexts = record.get("intents")
    for entry in contexts if isinstance(contexts, list) else []:
        for intent in entry if isinstance(entry, list) else [entry]:
            if isinstance(intent, str) and intent not in intents:
                intents.append(intent)
    influential = record.get("isinfluential")
    return {"isinfluential": influential if isinstance(influential, bool) else None,
            "intents": intents}


def store_citation_signals(graph: Graph, path: Path) -> int:
    """Write the staged signals onto the loaded edges; the number of edges set."""
    written, rows = 0, []
    with path.open(encoding="utf-8") as handle:
        for text in handle:
            row = json.loads(text)
            # No intent is no property (SET to null), as neo4j-admin imports an empty
            # array column and as empty lists are left out of every node.
            rows.append({**row, "intents": row["intents"] or None})
            if len(rows) >= SIGNAL_BATCH:
                written += write_signals(graph, rows)
                rows = []
    return written + write_signals(graph, rows)


def write_signals(graph: Graph, rows: list[dict[str, Any]]) -> int:
    if not rows:
        return 0
    result = graph.write("set_citation_signals", rows=rows)
    return int(result[0]["written"]) if result else 0
