"""A staged dataset merged with what the graph already holds: a staged paper that the
graph knows under another id (the same Semantic Scholar id, arXiv id or DOI, the match
`crase fetch` uses) takes the graph's id, in the papers, the citations and the signals
alike, so `crase load` of a dataset adds to those nodes instead of making a second one.

Only ids that change are held in memory (staged id -> graph id). The staged files are
read in chunks and, when some id changes, copied with the graph's ids into a folder beside
them (`<staged>.merged`): the staging itself stays as the dataset made it, to be reused by
a load into another graph. `crase db import` needs none of this: it replaces the database.
"""

import csv
import filecmp
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from crase.graph import Graph
from crase.ingest.corpus import CITATIONS_FILE, PAPERS_FILE
from crase.ingest.staging import SIGNALS_FILE

LOOKUP_CHUNK = 5_000


def adopt_graph_ids(graph: Graph, folder: Path) -> tuple[Path, int]:
    """The staged corpus with the ids the graph holds its papers under (`folder` itself
    when there is none to change), and the number of papers renamed."""
    renamed: dict[str, str] = {}
    for chunk in paper_chunks(folder / PAPERS_FILE):
        rows = [{"key": paper["id"], "s2_id": paper.get("s2_id"),
                 "arxiv_id": paper.get("arxiv_id"), "doi": paper.get("doi")}
                for paper in chunk]
        for found in graph.read("match_papers_by_external_ids", rows=rows):
            if found["id"] is not None and found["id"] != found["key"]:
                renamed[found["key"]] = found["id"]
    if not renamed:
        return folder, 0
    merged = folder.with_name(folder.name + ".merged")
    merged.mkdir(exist_ok=True)
    copy_papers(folder / PAPERS_FILE, merged / PAPERS_FILE, renamed)
    copy_citations(folder / CITATIONS_FILE, merged / CITATIONS_FILE, renamed)
    (merged / SIGNALS_FILE).unlink(missing_ok=True)
    if (folder / SIGNALS_FILE).exists():
        copy_signals(folder / SIGNALS_FILE, merged / SIGNALS_FILE, renamed)
    return merged, len(renamed)


def paper_chunks(path: Path) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for text in handle:
            chunk.append(json.loads(text))
            if len(chunk) >= LOOKUP_CHUNK:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def copy_papers(path: Path, target: Path, renamed: dict[str, str]) -> None:
    with path.open(encoding="utf-8") as source, replacing(target) as out:
        for text in source:
            paper = json.loads(text)
            paper["id"] = renamed.get(paper["id"], paper["id"])
            out.write(json.dumps(paper, ensure_ascii=False) + "\n")


def copy_citations(path: Path, target: Path, renamed: dict[str, str]) -> None:
    with path.open(encoding="utf-8", newline="") as source, replacing(target) as out:
        writer = csv.writer(out, lineterminator="\n")
        rows = csv.reader(source)
        writer.writerow(next(rows))  # the header
        writer.writerows([renamed.get(citing, citing), renamed.get(cited, cited)]
                         for citing, cited in rows)


def copy_signals(path: Path, target: Path, renamed: dict[str, str]) -> None:
    with path.open(encoding="utf-8") as source, replacing(target) as out:
        for text in source:
            row = json.loads(text)
            row["citing"] = renamed.get(row["citing"], row["citing"])
            row["cited"] = renamed.get(row["cited"], row["cited"])
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


@contextmanager
def replacing(path: Path) -> Iterator[TextIO]:
    """A file written beside `path` that becomes it when the block ends without error and
    it differs (an interrupted copy never leaves a half file under the name a load reads)."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    handle = temporary.open("w", encoding="utf-8", newline="")
    try:
        yield handle
    except BaseException:
        handle.close()
        temporary.unlink(missing_ok=True)
        raise
    handle.close()
    if path.exists() and filecmp.cmp(temporary, path, shallow=False):
        # The same copy as last time: the file is kept, and with it the modification
        # time a load's checkpoint fingerprints (a rerun resumes, or finds it loaded).
        temporary.unlink()
        return
    os.replace(temporary, path)
