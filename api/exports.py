"""A finished run's results as JSON, CSV, BibTeX or RIS, read from the graph.

Every format carries the paper's rank and score in the run, so a reference manager keeps
why the paper is on the list, and the paper's links (crase.paper_links), so it can open
the paper. A search's prior and derivative works (run_views.related_works) are always in
its JSON; the other formats add them on request (`related`), after the results, each with
why it is listed and a keyword (a tag in Zotero) naming its list.

BibTeX keeps the TeX of titles and names (brace-protected, so a style does not
lower-case them), escaped so that bibtexparser (which skips a brace after a backslash) and
classic BibTeX (which counts every brace) end each field at the same place: see
`bibtex_value`. CSV and RIS, read by people and spreadsheets, carry plain Unicode
(crase.scoring.tex.tex_to_unicode); JSON carries the fields as the graph holds them.
"""

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from crase.ingest.records import NAME_SUFFIX
from crase.paper_links import best_link, paper_links
from crase.scoring.tex import tex_to_unicode
from crase.text_limits import compile_linear

if TYPE_CHECKING:
    from crase.api.runs import TrackedRun
    from crase.graph import Graph


class ExportFormat(StrEnum):
    JSON = "json"
    CSV = "csv"
    BIBTEX = "bibtex"
    RIS = "ris"


# The HTTP response adds "; charset=utf-8" to a text/ type itself (a second one here would
# be sent twice); the others name it.
MEDIA_TYPES = {
    ExportFormat.JSON: "application/json",
    ExportFormat.CSV: "text/csv",
    ExportFormat.BIBTEX: "application/x-bibtex; charset=utf-8",
    ExportFormat.RIS: "application/x-research-info-systems; charset=utf-8",
}
EXTENSIONS = {ExportFormat.JSON: "json", ExportFormat.CSV: "csv", ExportFormat.BIBTEX: "bib",
              ExportFormat.RIS: "ris"}
CSV_COLUMNS = ("rank", "score", "id", "title", "authors", "year", "venue", "journal_ref",
               "arxiv_id", "doi", "url", "links", "abstract", "list", "why")
# The run's two related lists, by the word that names each in an export.
RELATED_LISTS = {"prior_works": "prior work", "derivative_works": "derivative work"}
RESULT = "result"
# Fields a reader sees as text: TeX in them becomes Unicode in CSV and RIS.
READABLE_FIELDS = ("title", "abstract", "venue", "journal_ref")
VERBATIM_FIELDS = ("url", "doi")
# A spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Characters TeX reads as commands that a title means literally.
LATEX_SPECIAL = frozenset("&%#")
# Literal braces written without a brace after a backslash, for when the escaped form
# `\{`, `\}` would make the two readers count braces differently.
BRACE_WORDS = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}
WORD_AND = compile_linear(r"\band\b", re.IGNORECASE)
NOT_ASCII_LETTER_OR_DIGIT = compile_linear(r"[^A-Za-z0-9]")


@dataclass(frozen=True)
class Export:
    body: str
    media_type: str
    filename: str


def export_run(graph: "Graph", run_id: str, tracked: "TrackedRun | None",
               export_format: ExportFormat, related: bool = False) -> Export:
    """The run in `export_format`; with `related`, a search's BibTeX, RIS or CSV also lists
    its prior and derivative works (its JSON always has them)."""
    # Imported here: `crase export --help` reads ExportFormat, and the run views bring the
    # driver and both pipelines with them (api/cli.py).
    from crase.api.run_views import read_results, related_works, require_finished, run_weighting
    from crase.run_retention import mark_exported

    record = require_finished(graph, run_id, tracked)
    results = read_results(graph, run_id, run_weighting(record))
    is_json = export_format is ExportFormat.JSON
    lists = (related_works(graph, run_id, len(results))
             if record["kind"] == "search" and (is_json or related) else {})
    if is_json:
        body = to_json(record, results, lists)
    else:
        writers = {ExportFormat.CSV: to_csv, ExportFormat.BIBTEX: to_bibtex,
                   ExportFormat.RIS: to_ris}
        body = writers[export_format](record, results, related_entries(lists))
    mark_exported(graph, run_id)  # a reference manager may hold its ids now: kept for good
    return Export(body, MEDIA_TYPES[export_format],
                  f"crase-run-{run_id}{'-related' if lists and not is_json else ''}"
                  f".{EXTENSIONS[export_format]}")


def related_entries(lists: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The prior and derivative works the run did not return (those it did are already in
    the export), each once and marked with its list; a paper on both lists is a prior work."""
    entries: dict[str, dict[str, Any]] = {}
    for name, word in RELATED_LISTS.items():
        for work in lists.get(name, []):
            if work["rank"] is None:
                entries.setdefault(work["id"], {**work, "list": word})
    return list(entries.values())


# JSON ---------------------------------------------------------------------------------------
def to_json(record: dict[str, Any], results: list[dict[str, Any]],
            related: dict[str, list[dict[str, Any]]]) -> str:
    """The run, its results with their evidence, and a search's prior and derivative
    works (run_views.related_works)."""
    run = {key: record[key] for key in ("id", "query", "params", "backends", "plan",
                                        "started", "finished")}
    return json.dumps({"run": run, "results": results, **related}, indent=2,
                      ensure_ascii=False)


# CSV ----------------------------------------------------------------------------------------
def to_csv(record: dict[str, Any], results: list[dict[str, Any]],
           related: list[dict[str, Any]] | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for paper in [{**paper, "list": RESULT} for paper in results] + (related or []):
        row = {**paper, "url": best_link(paper),
               "links": " ".join(paper_links(paper).values()),
               "authors": "; ".join(readable(author) for author in paper["authors"])}
        row.update({name: readable(paper.get(name)) for name in READABLE_FIELDS})
        writer.writerow([csv_cell(row.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()


def csv_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return "" if value is None else value


def readable(value: Any) -> Any:
    """TeX-marked text as plain Unicode, for the formats a person reads without TeX."""
    return tex_to_unicode(value) if isinstance(value, str) else value


# BibTeX -------------------------------------------------------------------------------------
def to_bibtex(record: dict[str, Any], results: list[dict[str, Any]],
              related: list[dict[str, Any]] | None = None) -> str:
    return "\n".join(bibtex_entry(record["id"], paper) for paper in results + (related or []))


def bibtex_entry(run_id: str, paper: dict[str, Any]) -> str:
    journal = paper.get("venue") or paper.get("journal_ref")
    fields: list[tuple[str, Any]] = [
        ("title", paper.get("title")),
        ("author", bibtex_authors(paper["authors"])),
        ("year", paper.get("year")),
        ("journal", journal),
        ("doi", paper.get("doi")),
        ("url", best_link(paper)),
        ("eprint", paper.get("arxiv_id")),
        ("archivePrefix", "arXiv" if paper.get("arxiv_id") else None),
        ("abstract", paper.get("abstract")),
        ("note", provenance(run_id, paper)),
        ("keywords", list_keyword(paper)),
    ]
    body = ",\n".join(f"  {name} = {bibtex_field(name, value)}" for name, value in fields
                      if value not in (None, ""))
    kind = "article" if journal else "misc"
    return f"@{kind}{{{bibtex_key(paper)},\n{body}\n}}\n"


def bibtex_field(name: str, value: Any) -> str:
    if name == "title":
        # Double braces keep the title's case: BibTeX styles lower-case a title's words,
        # which turns `$AdS_3$` into `$ads_3$` and `D-Branes` into `D-branes`.
        return f"{{{{{bibtex_value(value)}}}}}"
    if name in VERBATIM_FIELDS:
        return f"{{{verbatim_value(value)}}}"
    return f"{{{bibtex_value(value)}}}"


def bibtex_authors(authors: list[str]) -> str | None:
    """Names joined by " and ", each one BibTeX reads as one person: a suffix goes after
    the surname with commas (`Callan, Jr., Curtis G.`), and a name that holds the word
    "and" is braced so it is not split there."""
    names = []
    for name in authors:
        words = name.split()
        if len(words) > 2 and NAME_SUFFIX.match(words[-1]) and "," not in name:
            name = f"{words[-2]}, {words[-1]}, {' '.join(words[:-2])}"
        if WORD_AND.search(name):
            name = f"{{{name}}}"
        names.append(bibtex_value(name))
    return " and ".join(names) or None


def bibtex_key(paper: dict[str, Any]) -> str:
    words = paper["authors"][0].split() if paper["authors"] else []
    if len(words) > 1 and NAME_SUFFIX.match(words[-1]):
        words.pop()  # Callan, not Jr.
    surname = ascii_letters(words[-1]) if words else ""
    return f"{surname or 'anon'}{paper.get('year') or ''}_{ascii_letters(paper['id'])}"


def ascii_letters(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return NOT_ASCII_LETTER_OR_DIGIT.sub("", plain)


def bibtex_value(value: Any) -> str:
    """`value` as the text of a BibTeX field, read to the same end by bibtexparser, which
    skips a brace after a backslash, and by classic BibTeX, which counts every brace: no
    brace follows a backslash unless both readers' counts stay balanced, and no backslash
    ends the text (it would escape the field's closing brace for bibtexparser).

    TeX in the value stays (`$\\alpha$`, `K\\"ahler`, balanced `{...}` groups); `&`, `%`
    and `#` are escaped. Unbalanced grouping braces are shown as literal braces, and
    literal braces (`\\{`, `\\}`) that are not balanced among themselves are written
    `\\textbraceleft{}` and `\\textbraceright{}`; a lone backslash at the end is
    `\\textbackslash{}`."""
    tokens = list(tex_tokens(" ".join(str(value).split())))
    groups_balance = braces_balance(token for token in tokens if token in ("{", "}"))
    tokens = [token if groups_balance or token not in ("{", "}") else "\\" + token
              for token in tokens]
    literals_balance = braces_balance(token[1] for token in tokens
                                      if token in ("\\{", "\\}"))
    out: list[str] = []
    for token in tokens:
        if token in ("\\{", "\\}") and not literals_balance:
            token = BRACE_WORDS[token[1]]
        elif token == "\\":
            token = r"\textbackslash{}"
        elif token in LATEX_SPECIAL:
            token = "\\" + token
        if out and out[-1] == "\\\\" and token[0] in "{}":
            out.append(" ")  # `\\` then a brace: bibtexparser would skip that brace
        out.append(token)
    if out and out[-1] == "\\\\":
        out.append(" ")  # the field's closing brace must not follow a backslash
    return "".join(out)


def tex_tokens(text: str) -> Iterator[str]:
    """`text` cut into what a backslash starts (a control word `\\alpha`, a control
    symbol `\\{`, or `\\` alone at the end) and single characters."""
    index = 0
    while index < len(text):
        if text[index] != "\\":
            yield text[index]
            index += 1
            continue
        end = index + 1
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1
        end = max(end, min(index + 2, len(text)))
        yield text[index:end]
        index = end


def verbatim_value(value: Any) -> str:
    # URLs and DOIs are read verbatim (`\url`): a `\%` there would be a wrong address; a
    # backslash, which a URL cannot hold, and unbalanced braces are percent-encoded.
    text = " ".join(str(value).split()).replace("\\", "%5C")
    return text if braces_balance(text) else text.replace("{", "%7B").replace("}", "%7D")


def braces_balance(braces: Iterable[str]) -> bool:
    """Whether the braces among `braces` (characters or tokens) open before they close and
    all close."""
    depth = 0
    for char in braces:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def provenance(run_id: str, paper: dict[str, Any]) -> str:
    if paper.get("list", RESULT) != RESULT:
        return f"Crase run {run_id}, {paper['list']}: {paper['why']}"
    # Idea runs rank without a score; searches have both.
    score = f", score {paper['score']:.6g}" if paper.get("score") is not None else ""
    return f"Crase run {run_id}, rank {paper['rank']}{score}"


def list_keyword(paper: dict[str, Any]) -> str | None:
    """A related work's list as a keyword ("Crase prior work"), which Zotero makes a tag."""
    listed = paper.get("list", RESULT)
    return None if listed == RESULT else f"Crase {listed}"


# RIS ----------------------------------------------------------------------------------------
def to_ris(record: dict[str, Any], results: list[dict[str, Any]],
           related: list[dict[str, Any]] | None = None) -> str:
    return "".join(ris_entry(record["id"], paper) for paper in results + (related or []))


def ris_entry(run_id: str, paper: dict[str, Any]) -> str:
    """One RIS record in plain Unicode. UR holds the paper's best link first (the one a
    reference manager opens), then its others; DO the DOI; N1 the arXiv id and where the
    paper stands in the run."""
    journal = readable(paper.get("venue") or paper.get("journal_ref"))
    links = paper_links(paper)
    best = best_link(paper)
    lines = [("TY", "JOUR" if journal else "UNPB"), ("ID", paper["id"]),
             ("TI", readable(paper.get("title")))]
    lines += [("AU", readable(author)) for author in paper["authors"]]
    lines += [("PY", paper.get("year")), ("JO", journal), ("DO", paper.get("doi"))]
    lines += [("UR", url) for url in [best, *(u for u in links.values() if u != best)] if url]
    lines += [("AB", readable(paper.get("abstract"))),
              ("N1", f"arXiv:{paper['arxiv_id']}" if paper.get("arxiv_id") else None),
              ("N1", provenance(run_id, paper)), ("KW", list_keyword(paper))]
    text = "".join(f"{tag}  - {' '.join(str(value).split())}\r\n" for tag, value in lines
                   if value not in (None, ""))
    return text + "ER  - \r\n\r\n"
