"""`crase code-extract`, `crase validate export|import|report` and `crase entailment-data`:
the code extractor, human validation of evidence-graph edges, and entailment training
data. Each call is recorded as a Run of its own kind."""

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crase.api.commands.search import whole_number
from crase.errors import InvalidRequest
from crase.settings import Settings

# Only what the parsers need is imported above (api/cli.py); the driver and the tools
# themselves are imported by the functions that run them.
if TYPE_CHECKING:
    from crase.graph import Graph
    from crase.research.edge_validation import EdgeSource

ORDER = 60  # place in `crase --help` (api/cli.py)


def fraction(text: str) -> float:
    """An argparse type for a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number from 0 to 1")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.0 < value <= 600.0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds, above 0 and "
                                         "at most 600")
    return value


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    add_code_extract(subparsers)
    add_validate(subparsers)
    add_entailment_data(subparsers)


def add_code_extract(subparsers: argparse._SubParsersAction) -> None:
    extract = subparsers.add_parser(
        "code-extract", help="code and pseudocode in a paper, and implementation diagnostics",
        description="Find code and pseudocode blocks in a PDF, Markdown or text file by rules, "
                    "and diagnose frameworks, dependencies, model structure and missing "
                    "components. Without a model endpoint (role expert) every score is "
                    "heuristic. Code runs only with --execute, each block in a subprocess "
                    "with an empty environment, a temporary folder, resource limits, and "
                    "its own namespaces and cgroup where the host allows them, killed with "
                    "all it started at --timeout; it still runs as your user (see "
                    "docs/research-validation.md).")
    extract.add_argument("document", type=Path, help="a .pdf, .md or .txt file")
    extract.add_argument("--execute", action="store_true",
                         help="run each Python block that parses (off by default)")
    extract.add_argument("--timeout", type=seconds, default=10.0,
                         help="seconds each executed block may run (default 10)")
    extract.add_argument("--no-model", dest="use_model", action="store_false",
                         help="skip the model analysis even when an endpoint is configured")
    extract.add_argument("--out", type=Path, help="write the Markdown report to this file")
    extract.add_argument("--json", action="store_true", help="print the result as JSON")
    extract.set_defaults(handler=code_extract)


def add_validate(subparsers: argparse._SubParsersAction) -> None:
    validate = subparsers.add_parser(
        "validate", help="human validation of the evidence graph's edge decisions",
        description="export: a blinded sample of retained and pruned edges for annotators; "
                    "import: their filled sheets; report: agreement measures.")
    actions = validate.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser("export", help="write a blinded sample for annotators")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", dest="run_id", help="a finished search run (its evidence graph)")
    source.add_argument("--corpus", action="store_true",
                        help="every edge one scorer has scored in the corpus")
    export.add_argument("--scorer", help="with --corpus: NAME@VERSION when several scored")
    export.add_argument("--extractor", help="with --corpus: the claim extractor to show")
    export.add_argument("--theta", type=fraction, help="with --corpus (default: the setting)")
    export.add_argument("--tau", type=fraction, help="with --corpus (default: the setting)")
    export.add_argument("--edges", type=whole_number(1, 10_000), default=50,
                        help="edges in the sample (default 50)")
    export.add_argument("--retained-share", dest="retained_share", type=fraction, default=0.5,
                        help="share of retained edges (default 0.5; the rest are pruned)")
    export.add_argument("--annotators", nargs="+", default=["A", "B", "C"],
                        help="annotator names, one sheet each (default A B C)")
    export.add_argument("--seed", type=whole_number(0, None), default=0,
                        help="random seed of the sample (default 0)")
    export.add_argument("--out", type=Path,
                        help="folder for the sheets and the key (default "
                             "var_dir/validation/<run id>)")
    export.set_defaults(handler=validate_export)
    labels = actions.add_parser("import", help="import annotators' filled sheets")
    labels.add_argument("folder", type=Path, help="the export folder")
    labels.add_argument("sheets", type=Path, nargs="+", help="filled annotator sheets "
                                                             "(CSV or JSON)")
    labels.set_defaults(handler=validate_import)
    report = actions.add_parser("report", help="agreement of Crase and the annotators")
    report.add_argument("folder", type=Path, help="the export folder")
    report.add_argument("--json", action="store_true", help="print the report as JSON")
    report.set_defaults(handler=validate_report)


def add_entailment_data(subparsers: argparse._SubParsersAction) -> None:
    data = subparsers.add_parser(
        "entailment-data", help="SciNLI / MSciNLI pairs as score_entailment training data",
        description="Convert files in the SciNLI / MSciNLI layout (sentence1, sentence2, "
                    "label: entailment, reasoning, contrasting, neutral) into chat examples "
                    "of the score_entailment prompt (JSON lines), with a rejects file.")
    data.add_argument("inputs", type=Path, nargs="+", help="CSV, TSV or JSON-lines files")
    data.add_argument("--out", type=Path, required=True, help="the JSON-lines file to write")
    data.add_argument("--layout", choices=["auto", "csv", "tsv", "jsonl"], default="auto",
                      help="input layout (default: from each file's suffix)")
    data.add_argument("--rejects", type=Path, help="rejects file (default: next to --out)")
    data.set_defaults(handler=entailment_data)


# --- handlers ---------------------------------------------------------------------------


def code_extract(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.research.code_extractor import (
        ModelAnalyst,
        extract_code,
        read_document,
        report_markdown,
    )

    if args.out is not None and not args.out.parent.is_dir():
        raise InvalidRequest(f"--out {args.out}: its folder does not exist; create it first")
    document = read_document(args.document)
    analyst = ModelAnalyst.from_settings(settings.models) if args.use_model else None
    print(f"Analysis: {analyst.name if analyst else 'heuristic (no model endpoint)'}; "
          f"execution: {'on' if args.execute else 'off'}", file=sys.stderr)
    with Graph.connect(settings.database) as graph:
        result = extract_code(graph, document, args.execute, args.timeout, analyst)
    report = report_markdown(result)
    if args.out is not None:
        args.out.write_text(report, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1, default=str))
    elif args.out is None:
        print(report, end="")
    return 0


def edge_source(graph: "Graph", args: argparse.Namespace,
                settings: Settings) -> "EdgeSource":
    from crase.api.run_views import evidence_graph, read_run_record
    from crase.research.edge_validation import corpus_source, run_source

    if args.run_id is not None:
        corpus_only = {"--scorer": args.scorer, "--extractor": args.extractor,
                       "--theta": args.theta, "--tau": args.tau}
        given = [flag for flag, value in corpus_only.items() if value is not None]
        if given:
            raise InvalidRequest(f"{', '.join(given)} go with --corpus; a run's edges are "
                                 "judged with the run's own scorer, theta and tau")
        return run_source(evidence_graph(graph, args.run_id, None),
                          read_run_record(graph, args.run_id) or {"backends": {}})
    theta = settings.search.theta if args.theta is None else args.theta
    tau = settings.search.tau if args.tau is None else args.tau
    return corpus_source(graph, theta, tau, args.scorer, args.extractor)


def validate_export(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.research.edge_validation import SampleRequest, export_validation_sample

    request = SampleRequest(args.edges, args.retained_share, tuple(args.annotators), args.seed)
    run_id = uuid.uuid4().hex[:12]
    out_dir = args.out or settings.var_dir / "validation" / run_id
    with Graph.connect(settings.database) as graph:
        result = export_validation_sample(graph, edge_source(graph, args, settings), request,
                                          out_dir, run_id)
    c = result.counts
    print(f"Run {result.run_id}: {c['sampled']} edges ({c['sampled_retained']} retained, "
          f"{c['sampled_pruned']} pruned) of {c['edges_with_claims']} with claims on both "
          f"sides ({c['edges']} edges in the source)")
    print(f"Wrote {out_dir}: " + ", ".join(result.files))
    print("Give each annotator their own sheet; keep key.json away from them.")
    return 0


def validate_import(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.research.edge_validation import import_labels

    with Graph.connect(settings.database) as graph:
        result = import_labels(graph, args.folder, args.sheets)
    print(f"Run {result['run_id']}: imported {', '.join(result['imported'])}; "
          f"{len(result['annotators'])} annotators on record ({', '.join(result['annotators'])})"
          f", {result['items']} items")
    return 0


def validate_report(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.research.edge_validation import REPORT_MD, report_validation

    with Graph.connect(settings.database) as graph:
        report = report_validation(graph, args.folder)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print((args.folder / REPORT_MD).read_text(encoding="utf-8"), end="")
    return 0


def entailment_data(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.research.entailment_data import build_entailment_data

    with Graph.connect(settings.database) as graph:
        result: dict[str, Any] = build_entailment_data(graph, args.inputs, args.out,
                                                       args.layout, args.rejects)
    print(f"Run {result['run_id']}: {result['examples']} examples "
          f"({', '.join(f'{k} {v}' for k, v in result['labels'].items())}), "
          f"{result['rejects']} rejects")
    print(f"Wrote {result['out']} and {result['rejects_file']}")
    return 0
