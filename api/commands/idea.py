"""`crase idea` and `crase idea-audit`: idea to prior work from the command line."""

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from crase.api.commands.search import flag_name, flag_number
from crase.errors import InvalidRequest
from crase.idea.request import IdeaRequest
from crase.progress import CountProgress
from crase.settings import Settings
from crase.validation_messages import describe_invalid

# Only what the parsers need is imported above (api/cli.py); the run itself (the driver,
# the pipeline, its models) is imported by the functions that run it.
if TYPE_CHECKING:
    from crase.idea.pipeline import IdeaPaperResult, IdeaResult

# How the command line names each field of an idea request, for its error messages.
FLAGS = {"idea": "the idea", "year_min": "--year-min", "year_max": "--year-max",
         "mode": "--mode", "exclude": "--exclude", "pdf_dir": "--pdf-dir"}
NO_WORDS = ("the idea has no word to search for (only spaces, punctuation or search syntax); "
            "describe the research idea in words")


ORDER = 45  # place in `crase --help` (api/cli.py)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    idea = subparsers.add_parser(
        "idea", help="five identifiable papers for a research idea, with a full audit",
        description="Structure the idea, discover candidates (full text, recalled titles, "
                    "citation neighbours, providers when reachable), resolve identities, "
                    "assess abstracts, gate citation neighbours, shortlist, read 5 PDFs, and "
                    "rank five works jointly. Everything is recorded on a Run node and in an "
                    "audit JSON.")
    idea.add_argument("idea", help="the research idea, in quotes")
    idea.add_argument("--mode", choices=["retrieval_eval", "full_report"],
                      default="retrieval_eval",
                      help="retrieval_eval (default) stops after ranking and audit; "
                           "full_report adds a report from the saved evidence")
    idea.add_argument("--pdf-dir", dest="pdf_dir", type=Path,
                      help="folder of PDFs named <paper id>.pdf or <arXiv id>.pdf")
    idea.add_argument("--year-min", dest="year_min", type=flag_number(IdeaRequest, "year_min"),
                      help="earliest eligible year")
    idea.add_argument("--year-max", dest="year_max", type=flag_number(IdeaRequest, "year_max"),
                      help="latest eligible year")
    idea.add_argument("--exclude", nargs="*", default=[], metavar="ID",
                      help="paper ids to leave out with their edges")
    idea.add_argument("--no-providers", dest="providers", action="store_false", default=None,
                      help="do not probe or use external providers")
    idea.add_argument("--json", action="store_true", help="print the result as JSON")
    idea.add_argument("--audit-out", dest="audit_out", type=Path,
                      help="also write the audit JSON to this file")
    idea.set_defaults(handler=find_prior_work)

    audit = subparsers.add_parser("idea-audit", help="export the audit JSON of an idea run")
    audit.add_argument("run_id", help="the run id printed by `crase idea`")
    audit.add_argument("--out", type=Path, help="write to this file instead of stdout")
    audit.add_argument("--summary", action="store_true",
                       help="print a short readable summary (counts, where candidates were "
                            "lost) instead of the full JSON")
    audit.set_defaults(handler=export_audit)


def build_request(args: argparse.Namespace, settings: Settings) -> IdeaRequest:
    """The request of the command line, checked before any run exists: a bad value, an
    idea without a word or a folder that is not there ends here as InvalidRequest."""
    from crase.search.text_ranking import has_searchable_word

    if not has_searchable_word(args.idea):
        raise InvalidRequest(NO_WORDS)
    check_paths(args)
    try:
        return IdeaRequest(
            idea=args.idea, mode=args.mode, year_min=args.year_min, year_max=args.year_max,
            exclude=args.exclude, pdf_dir=str(args.pdf_dir) if args.pdf_dir else None,
            providers=args.providers, params=settings.idea)
    except ValidationError as err:
        raise InvalidRequest(describe_invalid(err, IdeaRequest, flag_name(FLAGS),
                                              "see `crase idea --help`")) from err


def check_paths(args: argparse.Namespace) -> None:
    # Both would fail late: a missing PDF folder quietly reads no PDF, and an audit file
    # in a missing folder fails only after the whole run.
    if args.pdf_dir is not None and not args.pdf_dir.is_dir():
        raise InvalidRequest(f"--pdf-dir {args.pdf_dir} is not a folder; give a folder of "
                             "PDFs named <paper id>.pdf or <arXiv id>.pdf")
    if args.audit_out is not None and not args.audit_out.parent.is_dir():
        raise InvalidRequest(f"--audit-out {args.audit_out}: its folder does not exist; "
                             "create it or give a file in a folder that does")


def find_prior_work(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.idea.pipeline import run_idea
    from crase.idea.roles.from_settings import build_idea_backends, describe_idea_backends
    from crase.run_lifecycle import Callbacks

    request = build_request(args, settings)
    backends = build_idea_backends(settings)
    print(f"Using {describe_idea_backends(backends)}", file=sys.stderr)
    with Graph.connect(settings.database) as graph:
        result = run_idea(graph, backends, request,
                          observer=Callbacks(on_stage=print_stage,
                                             on_items=CountProgress().update))
    if args.audit_out:
        args.audit_out.write_text(json.dumps(result.audit, indent=1, sort_keys=True,
                                             default=str) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result.to_dict(include_audit=False), indent=2, default=str))
    else:
        print_result(result, settings)
    return 0 if result.status == "done" else 1


def print_stage(stage: str) -> None:
    print(f"  {stage}...", file=sys.stderr)


def print_result(result: "IdeaResult", settings: Settings) -> None:
    c = result.counts
    print(f"Run {result.run_id}: outcome {result.outcome}; {c['works']} works from "
          f"{c['queries']} queries, {c['selected_for_assessment']} assessed, "
          f"{c['gate_admitted']} admitted by the citation gate, shortlist {c['shortlist']}, "
          f"PDFs {c['pdf_acquired']}/{c['pdf_attempts']}")
    print("Backends: " + ", ".join(f"{k}={v}" for k, v in result.backends.items()))
    if not result.papers:
        failure = result.ranking.get("failure") or {}
        print(f"No ranking: {failure.get('kind')}: {failure.get('detail')}")
    for paper in result.papers:
        print(f"{paper.rank}. [{paper.paper_id}] {paper.title} ({paper.year or 'n.d.'})")
        print(f"   match {describe_match(paper)}; routes {', '.join(paper.routes)}; "
              f"shortlist position {paper.shortlist_position}; PDF {paper.pdf_status}; "
              f"evidence {paper.evidence_source}")
        print(f"   {paper.reason}")
    for note in result.warnings:
        print(f"Warning: {note}")
    for note in result.incomplete:
        print(f"Incomplete: {note}")
    if result.report and result.report.get("path"):
        print(f"Report: {result.report['path']}")
    if result.audit_path:
        print(f"Audit: {result.audit_path}")
    print(f"Open it in Neo4j Browser ({settings.database.browser_url()}):\n  "
          f"{result.browser_query}")


def describe_match(paper: "IdeaPaperResult") -> str:
    """'weak (grade 1 of 3, similarity 0.16)': the match in words, then what it rests on."""
    grade = (f"grade {paper.grade} of 3" if paper.grade is not None
             else f"not graded: {paper.assessment_status}")
    similarity = f", similarity {paper.similarity:.2f}" if paper.similarity is not None else ""
    return f"{paper.match or 'unknown'} ({grade}{similarity})"


def export_audit(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.idea.audit import export_idea_audit

    with Graph.connect(settings.database) as graph:
        audit = export_idea_audit(graph, args.run_id)
    text = (json.dumps(audit, indent=1, sort_keys=True, default=str) + "\n"
            if not args.summary else "\n".join(summary_lines(audit)) + "\n")
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def summary_lines(audit: dict[str, Any]) -> list[str]:
    """`crase idea-audit RUN --summary`: the counts at each step, how many candidates each
    step lost (api/pages/idea_summary.py decides where, for the web page too), the final
    works with their match, and the run's warnings and gaps."""
    from crase.api.pages.idea_summary import summarize_audit

    if "candidates" not in audit:  # the run stored no audit (yet)
        return [f"Run {audit['run_id']} ({audit.get('status')}): {audit.get('note')}"]
    c = audit["counts"]
    routes = ", ".join(f"{name} {n}" for name, n in sorted(c["works_by_route"].items()))
    grades = ", ".join(f"grade {g}: {n}" for g, n in sorted(c["assessed_by_grade"].items()))
    lines = [
        f"Run {audit['run_id']}: outcome {audit['outcome']}; idea: {audit['idea']}",
        f"Found      {c['works']} works from {c['queries']} queries ({routes or 'no route'})",
        f"Assessed   {c['selected_for_assessment']} selected; {grades or 'none graded'}",
        f"Gate       {c['gate_admitted']} citation neighbours admitted",
        f"Shortlist  {c['shortlist']}; PDFs {c['pdf_acquired']} of {c['pdf_attempts']} "
        f"acquired; final {c['final']}",
        "Where candidates were lost:",
    ]
    lines += [f"  {stage:<14} {count:>5}  {meaning}"
              for stage, meaning, count in summarize_audit(audit)["stages"] if count]
    for paper in audit["final_ranking"]:
        match = f", match {paper['match']}" if paper.get("match") else ""
        lines.append(f"  {paper['rank']}. {paper['title']} ({paper['year'] or 'n.d.'}): "
                     f"grade {paper['grade']}{match}")
    lines += [f"Warning: {note}" for note in audit.get("warnings", [])]
    lines += [f"Incomplete: {note}" for note in audit["incomplete"]]
    return lines
