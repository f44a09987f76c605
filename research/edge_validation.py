"""Human validation of the evidence graph's edge decisions (the Crase paper's Table 5).

Three steps, each recorded on a Run node of its own kind:

1. export (`validation_export`): a sample of judged citation edges, from one search run's
   evidence graph or from every edge one scorer has scored in the corpus, with retained
   and pruned edges in stated proportions (`size`, `retained_share`), drawn with a seed.
   Each annotator gets a sheet (CSV and JSON) with the claims of both papers and an empty
   label column, blinded to the decision: no Delta, no verdict, no reason, and the items in
   an order that says nothing about them. The decisions go to a separate `key.json`, which
   annotators must not see.
2. import (`validation_import`): the annotators' filled sheets, checked against the key
   (every item labelled `retain` or `prune`, no unknown item), gathered in `labels.json`.
3. report (`validation_report`): Crase-majority agreement, retained-edge precision,
   pruned-edge correctness, unanimous agreement and Fleiss' kappa (crase.scoring.agreement),
   as `report.json` and `report.md`.

What an annotator decides: whether the cited paper's claims ground the citing paper's
claims, i.e. whether the edge should stay in the evidence graph (`retain`) or not (`prune`).
"""

import csv
import io
import json
import random
import re
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from crase.errors import EdgeValidationError
from crase.graph import Graph
from crase.run_lifecycle import RunLifecycle
from crase.scoring.agreement import (
    DECISIONS,
    PRUNE,
    RETAIN,
    AgreementReport,
    Decision,
    agreement_report,
    majority_label,
)
from crase.scoring.delta import judge_delta, stored_coverage_affinity
from crase.search.grounding import read_claims
from crase.user_files import open_user_file, read_user_text

MAX_SHEET_BYTES = 64_000_000  # a key or an annotator's sheet named on the command line

EXPORT_STAGES = ("edges", "sample", "write")
IMPORT_STAGES = ("read", "write")
REPORT_STAGES = ("read", "measure", "write")
KEY_FILE, ITEMS_FILE, LABELS_FILE = "key.json", "items.json", "labels.json"
REPORT_JSON, REPORT_MD = "report.json", "report.md"
SHEET_COLUMNS = ("item_id", "citing_id", "citing_title", "citing_claims", "cited_id",
                 "cited_title", "cited_claims", "label", "note")
ANNOTATOR_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
INSTRUCTIONS = (
    "For each item, read the claims of the citing paper and of the cited paper. Write "
    "'retain' in the label column when the cited paper's claims ground the citing paper's "
    "claims (if they hold, they are evidence for, or a premise of, what the citing paper "
    "claims), and 'prune' when they do not (a perfunctory, tangential or merely topical "
    "citation). Judge each item on its own; the note column is optional.")


@dataclass(frozen=True)
class JudgedEdge:
    citing: str
    cited: str
    delta: float | None
    decision: Decision
    reason: str  # the prune rule's verdict, as the evidence-graph view gives it


@dataclass(frozen=True)
class EdgeSource:
    """Where the sample is drawn from, with every edge the source judged."""

    kind: str  # "run" or "corpus"
    label: str  # "run 1a2b3c", "corpus, scorer offline-cosine@1"
    extractor: str  # the claim extractor whose claims annotators read
    scorer: str | None
    theta: float
    tau: float
    edges: list[JudgedEdge]

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "extractor": self.extractor,
                "scorer": self.scorer, "theta": self.theta, "tau": self.tau}


@dataclass(frozen=True)
class SampleRequest:
    size: int = 50
    retained_share: float = 0.5
    annotators: tuple[str, ...] = ("A", "B", "C")
    seed: int = 0


@dataclass
class ExportResult:
    run_id: str
    out_dir: Path
    counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)  # the blinded items

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "out_dir": str(self.out_dir), "counts": self.counts,
                "files": self.files, "items": self.items}


# --- where the edges come from ----------------------------------------------------------


def run_source(view: dict[str, Any], record: dict[str, Any]) -> EdgeSource:
    """The edges of one finished search run, as its evidence-graph view judged them
    (crase.api.run_views.evidence_graph), with the claims its extractor wrote."""
    edges = [JudgedEdge(e["citing"], e["cited"], e["delta"],
                        RETAIN if e["retained"] else PRUNE, e["reason"])
             for e in view["edges"]]
    return EdgeSource("run", f"run {view['run_id']}", record["backends"].get("claims", ""),
                      view.get("scorer"), float(view["theta"]), float(view["tau"]), edges)


def corpus_source(graph: Graph, theta: float, tau: float, scorer: str | None = None,
                  extractor: str | None = None) -> EdgeSource:
    """Every edge one scorer (`name@version`; the only one, when none is given) has scored
    in the corpus, judged by the prune rule at `theta` and `tau`."""
    name, version = pick_scorer(graph, scorer)
    rows = graph.read("validation_read_scored_edges", scorer=name, version=version,
                      theta=theta)
    edges = []
    for row in rows:
        delta = (float(row["delta"]) if row["matrix"] is None else
                 stored_coverage_affinity(row["matrix"], row["rows"], row["cols"], theta))
        verdict = judge_delta(delta, tau)
        edges.append(JudgedEdge(row["citing"], row["cited"], round(delta, 6),
                                RETAIN if verdict.kept else PRUNE, verdict.reason))
    return EdgeSource("corpus", f"corpus, scorer {name}@{version}", pick_extractor(
        graph, extractor), f"{name}@{version}", theta, tau, edges)


def pick_scorer(graph: Graph, scorer: str | None) -> tuple[str, str]:
    found = {f"{r['scorer']}@{r['version']}": r["edges"]
             for r in graph.read("validation_list_edge_scorers")}
    listed = ", ".join(f"{name} ({count} edges)" for name, count in found.items()) or "none"
    if scorer is None:
        if len(found) != 1:
            raise EdgeValidationError(
                f"the corpus has edges scored by {listed}; name one with --scorer NAME@VERSION"
                if found else "no citation edge of the corpus has been scored; run `crase "
                "score` (or a search with --weighting coverage) first")
        scorer = next(iter(found))
    if scorer not in found:
        raise EdgeValidationError(f"no edge is scored by {scorer}; scorers found: {listed}")
    name, _, version = scorer.rpartition("@")
    return name, version


def pick_extractor(graph: Graph, extractor: str | None) -> str:
    found = [r["extractor"] for r in graph.read("validation_list_claim_extractors")]
    if extractor is None and len(found) == 1:
        return str(found[0])
    if extractor is None or extractor not in found:
        raise EdgeValidationError(
            f"claims were extracted by {', '.join(found) or 'no extractor'}; name the one "
            "annotators should read with --extractor NAME")
    return extractor


# --- the sample -------------------------------------------------------------------------


def sample_edges(edges: Sequence[JudgedEdge], request: SampleRequest) -> list[JudgedEdge]:
    """`size` edges, round(size * retained_share) of them retained and the rest pruned,
    drawn at random with `seed` and shuffled together, so the order tells nothing."""
    want_retained = round(request.size * request.retained_share)
    want_pruned = request.size - want_retained
    retained = [e for e in edges if e.decision == RETAIN]
    pruned = [e for e in edges if e.decision == PRUNE]
    if len(retained) < want_retained or len(pruned) < want_pruned:
        raise EdgeValidationError(
            f"the sample asks for {want_retained} retained and {want_pruned} pruned edges "
            f"with claims on both sides, but the source has {len(retained)} retained and "
            f"{len(pruned)} pruned; ask for fewer edges or another retained share")
    rng = random.Random(request.seed)
    chosen = rng.sample(retained, want_retained) + rng.sample(pruned, want_pruned)
    rng.shuffle(chosen)
    return chosen


def with_claims(edges: list[JudgedEdge], claims: dict[str, list[str]]) -> list[JudgedEdge]:
    """Only edges an annotator can judge: both papers have claims."""
    return [e for e in edges if claims.get(e.citing) and claims.get(e.cited)]


def read_claim_texts(graph: Graph, paper_ids: list[str], extractor: str) -> dict[str, list[str]]:
    return {paper: [claim.text for claim in paper_claims]
            for paper, paper_claims in read_claims(graph, paper_ids, extractor).items()}


def blinded_items(sample: list[JudgedEdge], claims: dict[str, list[str]],
                  papers: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """What annotators see of each edge: ids, titles, years and claims, nothing more."""
    def side(paper_id: str) -> dict[str, Any]:
        paper = papers.get(paper_id, {})
        return {"id": paper_id, "title": paper.get("title") or "", "year": paper.get("year"),
                "claims": claims[paper_id]}

    return [{"item_id": item_id(n, len(sample)), "citing": side(edge.citing),
             "cited": side(edge.cited)} for n, edge in enumerate(sample, start=1)]


def item_id(number: int, total: int) -> str:
    return f"E{number:0{max(2, len(str(total)))}d}"


def answer_key(sample: list[JudgedEdge], source: EdgeSource,
               request: SampleRequest, run_id: str) -> dict[str, Any]:
    return {"export_run_id": run_id, "source": source.describe(),
            "sample": {**asdict(request), "annotators": list(request.annotators)},
            "items": {item_id(n, len(sample)): asdict(edge)
                      for n, edge in enumerate(sample, start=1)}}


# --- export -----------------------------------------------------------------------------


def export_validation_sample(graph: Graph, source: EdgeSource, request: SampleRequest,
                             out_dir: Path, run_id: str | None = None) -> ExportResult:
    """Draw the sample, write the annotators' sheets and the key; recorded as a
    `validation_export` run."""
    check_request(request)
    run_id = run_id or uuid.uuid4().hex[:12]
    params = {**asdict(request), "source": source.describe(), "out_dir": str(out_dir)}
    with RunLifecycle.open(graph, run_id, "validation_export", source.label, params,
                           {"claims": source.extractor, "entailment": source.scorer or ""},
                           EXPORT_STAGES) as run:
        result = ExportResult(run_id, out_dir)
        with run.stage("edges"):
            papers = sorted({p for e in source.edges for p in (e.citing, e.cited)})
            claims = read_claim_texts(graph, papers, source.extractor)
            usable = with_claims(source.edges, claims)
        with run.stage("sample"):
            sample = sample_edges(usable, request)
            ids = sorted({p for e in sample for p in (e.citing, e.cited)})
            shown = {row["id"]: row for row in graph.read("read_papers", ids=ids)}
            result.items = blinded_items(sample, claims, shown)
        with run.stage("write"):
            result.files = write_export(out_dir, result.items,
                                        answer_key(sample, source, request, run_id),
                                        request.annotators)
        result.counts = {
            "edges": len(source.edges), "edges_with_claims": len(usable),
            "retained_available": sum(1 for e in usable if e.decision == RETAIN),
            "pruned_available": sum(1 for e in usable if e.decision == PRUNE),
            "sampled": len(sample),
            "sampled_retained": sum(1 for e in sample if e.decision == RETAIN),
            "sampled_pruned": sum(1 for e in sample if e.decision == PRUNE),
            "annotators": len(request.annotators)}
        run.counts = result.counts
    return result


def check_request(request: SampleRequest) -> None:
    if request.size < 1:
        raise EdgeValidationError("the sample needs at least one edge; give --edges 1 or more")
    if not 0.0 <= request.retained_share <= 1.0:
        raise EdgeValidationError("the retained share is a fraction between 0 and 1; give "
                                  "for example --retained-share 0.5")
    if len(request.annotators) < 2 or len(set(request.annotators)) != len(request.annotators):
        raise EdgeValidationError("agreement needs at least two annotators with distinct "
                                  "names; give for example --annotators A B C")
    bad = [name for name in request.annotators if not ANNOTATOR_NAME.match(name)]
    if bad:
        raise EdgeValidationError(f"annotator names {bad} are not 1-40 letters, digits, '-' "
                                  "or '_'; they become file names")


def write_export(out_dir: Path, items: list[dict[str, Any]], key: dict[str, Any],
                 annotators: Sequence[str]) -> list[str]:
    """items.json, one CSV and one JSON sheet per annotator, and key.json; the file names."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if (out_dir / KEY_FILE).exists():
        raise EdgeValidationError(f"{out_dir} already holds an export (its {KEY_FILE}); "
                                  "give another --out folder")
    files = [ITEMS_FILE]
    write_json(out_dir / ITEMS_FILE, {"instructions": INSTRUCTIONS, "items": items})
    for name in annotators:
        write_sheet_csv(out_dir / f"annotator_{name}.csv", items)
        write_json(out_dir / f"annotator_{name}.json", {
            "annotator": name, "instructions": INSTRUCTIONS,
            "items": [{**item, "label": None, "note": ""} for item in items]})
        files += [f"annotator_{name}.csv", f"annotator_{name}.json"]
    write_json(out_dir / KEY_FILE, key)
    return [*files, KEY_FILE]


def write_sheet_csv(path: Path, items: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(SHEET_COLUMNS)
        for item in items:
            citing, cited = item["citing"], item["cited"]
            writer.writerow([item["item_id"], citing["id"], citing["title"],
                             numbered(citing["claims"]), cited["id"], cited["title"],
                             numbered(cited["claims"]), "", ""])


def numbered(claims: list[str]) -> str:
    return "\n".join(f"{n}. {claim}" for n, claim in enumerate(claims, start=1))


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(read_user_text(path, "the validation file", MAX_SHEET_BYTES))
    except FileNotFoundError as err:
        raise EdgeValidationError(f"{path} is missing: {what}") from err
    except RecursionError as err:
        raise EdgeValidationError(f"{path} is JSON nested too deeply; restore it from the "
                                  "export") from err
    except ValueError as err:  # not JSON, not UTF-8, an integer past the digit limit
        raise EdgeValidationError(f"{path} is not readable JSON ({err}); restore it from "
                                  "the export") from err


def read_key(out_dir: Path) -> dict[str, Any]:
    key = read_json(out_dir / KEY_FILE, "give the folder `crase validate export` wrote")
    if not isinstance(key, dict) or not isinstance(key.get("items"), dict):
        raise EdgeValidationError(f"{out_dir / KEY_FILE} is not an export key")
    return key


# --- import -----------------------------------------------------------------------------


def read_sheet(path: Path) -> tuple[str, dict[str, str]]:
    """(annotator, item id -> label as written) of a filled sheet, CSV or JSON."""
    if path.suffix.lower() == ".json":
        sheet = read_json(path, "give the annotator's filled sheet")
        if not isinstance(sheet, dict) or not isinstance(sheet.get("items"), list):
            raise EdgeValidationError(f"{path} is not an annotator sheet (an object with "
                                      "'annotator' and 'items')")
        rows = [item for item in sheet["items"] if isinstance(item, dict)]
        return (str(sheet.get("annotator") or annotator_of(path)),
                {str(r.get("item_id")): str(r.get("label") or "") for r in rows})
    try:
        with io.TextIOWrapper(open_user_file(path, "the sheet", MAX_SHEET_BYTES),
                              encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except csv.Error as err:
        raise EdgeValidationError(f"{path} is not a CSV sheet that can be read ({err}); fill "
                                  "in the sheet the export wrote") from err
    except FileNotFoundError as err:
        raise EdgeValidationError(f"{path} is missing; give the annotator's filled sheet"
                                  ) from err
    except UnicodeDecodeError as err:
        raise EdgeValidationError(f"{path} is not UTF-8; save the sheet as UTF-8 CSV") from err
    if rows and not {"item_id", "label"} <= set(rows[0]):
        raise EdgeValidationError(f"{path} has no item_id and label columns; fill in the "
                                  "sheet the export wrote")
    return annotator_of(path), {r["item_id"]: r.get("label") or "" for r in rows}


def annotator_of(path: Path) -> str:
    return path.stem.removeprefix("annotator_")


def check_labels(annotator: str, written: dict[str, str], items: set[str],
                 path: str) -> dict[str, Decision]:
    unknown = sorted(set(written) - items)
    if unknown:
        raise EdgeValidationError(f"{path}: items {unknown[:5]} are not in the export's key; "
                                  "import sheets of this export only")
    labels = {item: label.strip().lower() for item, label in written.items()}
    missing = sorted(items - {item for item, label in labels.items() if label})
    if missing:
        raise EdgeValidationError(
            f"{path}: annotator {annotator} left {len(missing)} items without a label "
            f"({', '.join(missing[:5])}); write retain or prune in each")
    wrong = sorted(item for item, label in labels.items() if label not in DECISIONS)
    if wrong:
        raise EdgeValidationError(
            f"{path}: items {wrong[:5]} have labels other than retain or prune "
            f"({', '.join(repr(written[i]) for i in wrong[:5])}); use exactly those two words")
    return {item: cast(Decision, label) for item, label in labels.items()}


def import_labels(graph: Graph, out_dir: Path, sheets: Sequence[Path],
                  run_id: str | None = None) -> dict[str, Any]:
    """Check the filled sheets (CSV or JSON) against the key and add them to labels.json;
    recorded as a `validation_import` run."""
    found = []
    for path in sheets:
        annotator, written = read_sheet(path)
        found.append((annotator, written, str(path)))
    return record_labels(graph, out_dir, found, run_id)


def record_labels(graph: Graph, out_dir: Path, sheets: Sequence[tuple[str, dict[str, str],
                                                                      str]],
                  run_id: str | None = None) -> dict[str, Any]:
    """(annotator, item id -> label, where it came from) checked against the key and added
    to labels.json (an annotator imported again is replaced); a `validation_import` run."""
    run_id = run_id or uuid.uuid4().hex[:12]
    with RunLifecycle.open(graph, run_id, "validation_import", str(out_dir),
                           {"sheets": [where for _, _, where in sheets]}, {},
                           IMPORT_STAGES) as run:
        with run.stage("read"):
            key = read_key(out_dir)
            items = set(key["items"])
            found: dict[str, dict[str, Decision]] = {}
            for annotator, written, where in sheets:
                if not ANNOTATOR_NAME.match(annotator):
                    raise EdgeValidationError(f"{where}: annotator name {annotator!r} is not "
                                              "1-40 letters, digits, '-' or '_'")
                if annotator in found:
                    raise EdgeValidationError(f"two sheets are from annotator {annotator}; "
                                              "give each annotator's sheet once")
                found[annotator] = check_labels(annotator, written, items, where)
        with run.stage("write"):
            labels = read_labels(out_dir) | found
            write_json(out_dir / LABELS_FILE, {"export_run_id": key.get("export_run_id"),
                                               "labels": labels})
        run.counts = {"imported": len(found), "annotators": len(labels), "items": len(items)}
        return {"run_id": run_id, "imported": sorted(found), "annotators": sorted(labels),
                "items": len(items)}


def read_labels(out_dir: Path) -> dict[str, dict[str, Decision]]:
    path = out_dir / LABELS_FILE
    if not path.exists():
        return {}
    stored = read_json(path, "")
    return dict(stored.get("labels", {})) if isinstance(stored, dict) else {}


# --- report -----------------------------------------------------------------------------


def report_validation(graph: Graph, out_dir: Path, run_id: str | None = None
                      ) -> dict[str, Any]:
    """The agreement measures of the imported labels against the key, written as
    report.json and report.md; recorded as a `validation_report` run."""
    run_id = run_id or uuid.uuid4().hex[:12]
    with RunLifecycle.open(graph, run_id, "validation_report", str(out_dir), {}, {},
                           REPORT_STAGES) as run:
        with run.stage("read"):
            key = read_key(out_dir)
            labels = read_labels(out_dir)
            if len(labels) < 2:
                raise EdgeValidationError(
                    f"{len(labels)} annotator(s) imported; agreement needs at least two: "
                    "run `crase validate import` with their filled sheets")
        with run.stage("measure"):
            decisions = {item: e["decision"] for item, e in key["items"].items()}
            names = sorted(labels)
            per_item = {item: [labels[name][item] for name in names] for item in decisions}
            measures = agreement_report(decisions, per_item)
        with run.stage("write"):
            report = {"run_id": run_id, "export_run_id": key.get("export_run_id"),
                      "source": key["source"], "annotators": names,
                      "measures": measures.to_dict(),
                      "items": item_rows(key["items"], per_item)}
            write_json(out_dir / REPORT_JSON, report)
            (out_dir / REPORT_MD).write_text(report_markdown(report, measures),
                                             encoding="utf-8")
        run.counts = measures.to_dict()
        return report


def item_rows(key_items: dict[str, Any], per_item: dict[str, list[Decision]]
              ) -> list[dict[str, Any]]:
    return [{"item_id": item, "citing": edge["citing"], "cited": edge["cited"],
             "delta": edge["delta"], "decision": edge["decision"], "labels": per_item[item],
             "majority": majority_label(per_item[item])}
            for item, edge in sorted(key_items.items())]


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def report_markdown(report: dict[str, Any], m: AgreementReport) -> str:
    kappa = "n/a" if m.fleiss_kappa is None else f"{m.fleiss_kappa:.2f}"
    lines = [
        "# Human validation of evidence-graph decisions", "",
        f"Source: {report['source']['label']} (theta {report['source']['theta']:g}, "
        f"tau {report['source']['tau']:g}). {m.items} edges ({m.retained} retained, "
        f"{m.pruned} pruned by Crase), {m.annotators} annotators "
        f"({', '.join(report['annotators'])}) blinded to the decision; "
        f"{m.items_with_majority} edges have a majority label.", "",
        "| measure | score |", "| --- | ---: |",
        f"| Crase-majority agreement | {percent(m.crase_majority_agreement)} |",
        f"| Retained-edge precision | {percent(m.retained_edge_precision)} |",
        f"| Pruned-edge correctness | {percent(m.pruned_edge_correctness)} |",
        f"| Unanimous agreement | {percent(m.unanimous_agreement)} |",
        f"| Fleiss' kappa | {kappa} |", "",
        "| item | citing | cited | Delta | Crase | labels | majority |",
        "| --- | --- | --- | ---: | --- | --- | --- |",
    ]
    for row in report["items"]:
        delta = "n/a" if row["delta"] is None else f"{row['delta']:.3f}"
        lines.append(f"| {row['item_id']} | {row['citing']} | {row['cited']} | {delta} | "
                     f"{row['decision']} | {', '.join(row['labels'])} | "
                     f"{row['majority'] or 'tie'} |")
    return "\n".join(lines) + "\n"
