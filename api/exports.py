"""A finished run's results as JSON, CSV, BibTeX or RIS, read from the graph.

Every format carries the paper's rank and score in the run, so a reference manager keeps
why the paper is on the list.
"""

import csv
import io
import json
import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from crase.api.run_views import read_results, require_finished
from crase.api.runs import TrackedRun
from crase.graph import Graph


class ExportFormat(StrEnum):
    JSON = "json"
    CSV = "csv"
    BIBTEX = "bibtex"
    RIS = "ris"


MEDIA_TYPES = {
    ExportFormat.JSON: "application/json",
    ExportFormat.CSV: "text/csv; charset=utf-8",
    ExportFormat.BIBTEX: "application/x-bibtex; charset=utf-8",
    ExportFormat.RIS: "application/x-research-info-systems; charset=utf-8",
}
EXTENSIONS = {ExportFormat.JSON: "json", ExportFormat.CSV: "csv", ExportFormat.BIBTEX: "bib",
              ExportFormat.RIS: "ris"}
CSV_COLUMNS = ("rank", "score", "id", "title", "authors", "year", "venue", "journal_ref",
               "arxiv_id", "doi")
# A spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
LATEX_SPECIAL = re.compile(r"(?<!\\)([&%#])")


@dataclass(frozen=True)
class Export:
    body: str
    media_type: str
    filename: str


def export_run(graph: Graph, run_id: str, tracked: TrackedRun | None,
               export_format: ExportFormat) -> Export:
    record = require_finished(graph, run_id, tracked)
    results = read_results(graph, run_id)
    writers = {ExportFormat.JSON: to_json, ExportFormat.CSV: to_csv,
               ExportFormat.BIBTEX: to_bibtex, ExportFormat.RIS: to_ris}
    body = writers[export_format](record, results)
    return Export(body, MEDIA_TYPES[export_format],
                  f"crase-run-{run_id}.{EXTENSIONS[export_format]}")


# JSON ---------------------------------------------------------------------------------------
def to_json(record: dict[str, Any], results: list[dict[str, Any]]) -> str:
    run = {key: record[key] for key in ("id", "query", "params", "backends", "plan",
                                        "started", "finished")}
    return json.dumps({"run": run, "results": results}, indent=2, ensure_ascii=False)


# CSV ----------------------------------------------------------------------------------------
def to_csv(record: dict[str, Any], results: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for paper in results:
        row = {**paper, "authors": "; ".join(paper["authors"])}
        writer.writerow([csv_cell(row.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()


def csv_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return "" if value is None else value


# BibTeX -------------------------------------------------------------------------------------
def to_bibtex(record: dict[str, Any], results: list[dict[str, Any]]) -> str:
    return "\n".join(bibtex_entry(record["id"], paper) for paper in results)


def bibtex_entry(run_id: str, paper: dict[str, Any]) -> str:
    journal = paper.get("venue") or paper.get("journal_ref")
    fields: list[tuple[str, Any]] = [
        ("title", paper.get("title")),
        ("author", " and ".join(paper["authors"]) if paper["authors"] else None),
        ("year", paper.get("year")),
        ("journal", journal),
        ("doi", paper.get("doi")),
        ("eprint", paper.get("arxiv_id")),
        ("archivePrefix", "arXiv" if paper.get("arxiv_id") else None),
        ("note", provenance(run_id, paper)),
    ]
    body = ",\n".join(f"  {name} = {{{bibtex_value(value)}}}" for name, value in fields
                      if value not in (None, ""))
    kind = "article" if journal else "misc"
    return f"@{kind}{{{bibtex_key(paper)},\n{body}\n}}\n"


def bibtex_key(paper: dict[str, Any]) -> str:
    first_author = paper["authors"][0] if paper["authors"] else "anon"
    surname = ascii_letters(first_author.split()[-1] if first_author.split() else "anon")
    return f"{surname or 'anon'}{paper.get('year') or ''}_{ascii_letters(paper['id'])}"


def ascii_letters(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9]", "", plain)


def bibtex_value(value: Any) -> str:
    text = " ".join(str(value).split())
    text = LATEX_SPECIAL.sub(r"\\\1", text)
    if not braces_balance(text):
        # An unbalanced brace would end the field early; escape them all instead.
        text = text.replace("{", r"\{").replace("}", r"\}")
    return text


def braces_balance(text: str) -> bool:
    depth = 0
    for index, char in enumerate(text):
        if index and text[index - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def provenance(run_id: str, paper: dict[str, Any]) -> str:
    # Idea runs rank without a score; searches have both.
    score = f", score {paper['score']:.6g}" if paper.get("score") is not None else ""
    return f"Crase run {run_id}, rank {paper['rank']}{score}"


# RIS ----------------------------------------------------------------------------------------
def to_ris(record: dict[str, Any], results: list[dict[str, Any]]) -> str:
    return "".join(ris_entry(record["id"], paper) for paper in results)


def ris_entry(run_id: str, paper: dict[str, Any]) -> str:
    journal = paper.get("venue") or paper.get("journal_ref")
    lines = [("TY", "JOUR" if journal else "UNPB"), ("ID", paper["id"]),
             ("TI", paper.get("title"))]
    lines += [("AU", author) for author in paper["authors"]]
    lines += [("PY", paper.get("year")), ("JO", journal), ("DO", paper.get("doi")),
              ("AB", paper.get("abstract")),
              ("N1", f"arXiv:{paper['arxiv_id']}" if paper.get("arxiv_id") else None),
              ("N1", provenance(run_id, paper))]
    text = "".join(f"{tag}  - {' '.join(str(value).split())}\r\n" for tag, value in lines
                   if value not in (None, ""))
    return text + "ER  - \r\n\r\n"
