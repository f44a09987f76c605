"""`crase search` and `crase score`: the evidence-graph search from the command line."""

import argparse
import functools
import json
import math
import sys
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from crase.errors import InvalidRequest
from crase.paper_links import best_link, paper_links
from crase.progress import CountProgress
from crase.scoring.tex import tex_to_unicode
from crase.search.request import MAX_GIVEN_PAPERS, SearchRequest
from crase.settings import (
    RENAMED_SEARCH_SETTINGS,
    ModelSettings,
    SearchSettings,
    Settings,
    choices,
)
from crase.validation_messages import Loc, allowed_range, describe_invalid, field_at, number_kind

# Only what the parser needs is imported above (api/cli.py); the search itself (the driver,
# numpy, the encoder) is imported by the functions that run or print one.
if TYPE_CHECKING:
    from crase.graph import Graph
    from crase.reference_lists import ReferenceEntry
    from crase.search.evidence import EdgeEvidence
    from crase.search.given_papers import GivenPapers
    from crase.search.pipeline import RankedPaper, SearchResult
    from crase.search.seeds import Seed


# Search settings the command line leaves to the environment and .env (CRASE_SEARCH__ALPHA,
# ...): the walk's and the seed pool's fine tuning, never offered as flags. Every other
# search setting is a flag, derived from its field, so a new setting needs no edit here.
SETTINGS_ONLY = ("seed_pool", "seed_rule", "sub_query_weight", "alpha", "max_iterations",
                 "tolerance")
SEARCH_FLAGS = tuple(name for name in SearchSettings.model_fields if name not in SETTINGS_ONLY)


class RenamedFlag(argparse.Action):
    """A flag renamed in this release (RENAMED_SEARCH_SETTINGS): still read, with a one-line
    deprecation message, until the next release; not shown in --help."""

    def __init__(self, *args: Any, new_flag: str, **kwargs: Any) -> None:
        kwargs["help"] = argparse.SUPPRESS
        super().__init__(*args, **kwargs)
        self.new_flag = new_flag

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        warnings.warn(f"{option_string} is now {self.new_flag}; {option_string} is read until "
                      "the next release", FutureWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def flag_of(name: str) -> str:
    """A setting's flag: -k for a one-letter name, else --seeds-per-query style."""
    return f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")


# How the command line names each field of a request, for its error messages.
FLAGS = {"query": "the query", "given_papers": "--from", "reference_year": "--year",
         "exclude": "--exclude",
         **{name: flag_of(name) for name in SEARCH_FLAGS}}
NO_WORDS = ("the query has no word to search for (only spaces, punctuation or search "
            "syntax); give the research question in words, e.g. crase search \"tachyon "
            "condensation on D-branes\"")


def flag_number(model: type[BaseModel], field: str) -> Callable[[str], float]:
    """An argparse type for a numeric field: parses the number, and says the field's range
    when the text is none (the range itself is checked where the request is built)."""
    info = field_at(model, (field,))
    assert info is not None, field
    kind = number_kind(info)
    whole = kind == "a whole number"

    def parse(text: str) -> float:
        try:
            return int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {kind}; give one {allowed_range(info)}") from None
    return parse


def setting_flag(model: type[BaseModel], name: str) -> dict[str, Any]:
    """argparse keywords for a settings field: its Literal's choices or a number type, and
    help from its description and default. The parser's own default stays None, so a flag
    left out keeps the configured setting (environment, .env) and not the field's default."""
    field = model.model_fields[name]
    # argparse formats help with %, which a description may hold.
    text = f"{field.description} (default {field.default})".replace("%", "%%")
    options = choices(model, name)
    if options:
        return {"dest": name, "choices": options, "help": text}
    if field.annotation in (int, float):
        return {"dest": name, "type": flag_number(model, name), "help": text}
    raise TypeError(f"{model.__name__}.{name}: no flag for a {field.annotation} setting; "
                    "add it to SETTINGS_ONLY or teach setting_flag its type")


def whole_number(low: int, high: int | None) -> Callable[[str], int]:
    """An argparse type for a whole number from low to high (None: no upper end)."""
    span = f"from {low} to {high}" if high is not None else f"at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text!r}: give a whole number {span}")
        return value
    return parse


def finite_number(low: float, high: float | None) -> Callable[[str], float]:
    """An argparse type for a finite number from low to high (None: no upper end): `nan`,
    `inf` and out-of-range values are refused with the range in one line."""
    span = f"from {low:g} to {high:g}" if high is not None else f"of at least {low:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text!r}: give a finite number {span}")
        return value
    return parse


def flag_name(flags: Mapping[str, str]) -> Callable[[Loc], str]:
    """How an error names a request field: its flag, else its dotted place in the request."""
    return lambda loc: flags.get(str(loc[-1]), ".".join(str(p) for p in loc)) if loc else "input"


ORDER = 20  # place in `crase --help` (api/cli.py)
# Model settings both commands offer as flags (derived from their fields, like the search's).
MODEL_FLAGS = ("entailment_scorer",)


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    for name in MODEL_FLAGS:
        parser.add_argument(flag_of(name), **setting_flag(ModelSettings, name))


def with_model_flags(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings with the model flags given on the command line in place."""
    given = {name: getattr(args, name) for name in MODEL_FLAGS
             if getattr(args, name, None) is not None}
    if not given:
        return settings
    return settings.model_copy(update={"models": settings.models.model_copy(update=given)})


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    search = subparsers.add_parser(
        "search", help="evidence-graph search for a research question, or from papers",
        description="Seed from the query's own text ranking (and the plan's sub-queries, if\n"
                    "any), expand to the citation neighbourhood, rank with personalized\n"
                    "PageRank (or SALSA) restarting at the seeds by text relevance, and\n"
                    "explain; --weighting coverage grounds every edge in claims first.\n\n"
                    "With --from or --from-file the search starts from papers you know\n"
                    "instead: they are the seeds, never a result, and each result says which\n"
                    "of them it connects to; the query is then optional and, given, ranks\n"
                    "the text's candidates too. Every given paper must be found in the\n"
                    "graph: those that are not are listed and the search does not run.",
        epilog="examples:\n"
               "  crase search --from hep-th/9711200 --from arXiv:hep-th/9802150v2\n"
               "  crase search \"black hole entropy\" --from-file my-library.bib\n"
               "  crase search --from \"Dirichlet-Branes and Ramond-Ramond Charges\"",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    search.add_argument("query", nargs="?", default="",
                        help="the research question, in quotes (optional with --from or "
                             "--from-file)")
    search.add_argument("--from", dest="given_papers", action="append", default=[],
                        metavar="PAPER",
                        help="a paper to start from: its id, arXiv id (hep-th/9901001, "
                             "arXiv:2101.01234v2, an abs URL), DOI (or doi.org URL) or exact "
                             "title; repeat for more (at most "
                             f"{MAX_GIVEN_PAPERS} papers in all)")
    search.add_argument("--from-file", dest="given_paper_files", action="append", default=[],
                        type=Path, metavar="PATH",
                        help="papers to start from, read from a reference manager's export "
                             "(.bib BibTeX/BibLaTeX or .ris; another name is told by its "
                             "first line): each entry by its DOI, else its arXiv id, else its "
                             "title; repeatable")
    for name in SEARCH_FLAGS:
        search.add_argument(flag_of(name), **setting_flag(SearchSettings, name))
    for old, new in RENAMED_SEARCH_SETTINGS.items():
        search.add_argument(flag_of(old), **setting_flag(SearchSettings, new),
                            action=RenamedFlag, new_flag=flag_of(new))
    search.add_argument("--year", type=flag_number(SearchRequest, "reference_year"),
                        dest="reference_year",
                        help="measure ages from this year (default: this year)")
    search.add_argument("--exclude", nargs="*", default=[], metavar="ID",
                        help="paper ids to leave out with their edges")
    search.add_argument("--json", action="store_true", help="print the full result as JSON")
    add_model_flags(search)
    search.set_defaults(handler=search_papers)

    score = subparsers.add_parser(
        "score", help="extract claims and score every unscored citation edge (resumable)")
    score.add_argument("--batch-size", type=whole_number(1, 100_000), default=2000,
                       help="edges per batch (1 to 100000, default 2000)")
    score.add_argument("--limit", type=whole_number(1, None), default=None,
                       help="stop after this many edges")
    score.add_argument("--cache-size", type=whole_number(0, 100_000_000), default=400_000,
                       help="claim embeddings kept in memory, per worker (default 400000)")
    score.add_argument("--engine", choices=["local", "ray"], default="local",
                       help="local: batches one after another in this process (default); "
                            "ray: batches spread over Ray workers, each with its own graph "
                            "connection and backends (the ray extra; "
                            "docs/distributed-scoring.md)")
    score.add_argument("--ray-address", dest="ray_address", metavar="ADDRESS",
                       help="with --engine ray: the Ray cluster to join, \"auto\" for the one "
                            "this machine belongs to, or host:port / ray://host:10001 "
                            "(default: start a local Ray instance for this run)")
    score.add_argument("--workers", type=whole_number(1, 10_000),
                       help="with --engine ray: worker processes, one CPU each (default 2)")
    add_model_flags(score)
    score.set_defaults(handler=score_edges)


def build_request(args: argparse.Namespace, settings: Settings,
                  given_papers: Sequence[str] = ()) -> SearchRequest:
    """The request of the command line, checked before any run exists: a bad value or a
    query without a word ends here as InvalidRequest, naming the flag and its range.
    `given_papers` are the graph ids of the papers to start from."""
    from crase.search.text_ranking import has_searchable_word

    overrides = {name: getattr(args, name) for name in SEARCH_FLAGS
                 if getattr(args, name) is not None}
    query = args.query.strip() if given_papers else args.query
    # First: "*" or "" would otherwise be called too short, and "***" still has no word.
    # Starting from papers, the query may be left out, but text given must hold a word.
    if (query or not given_papers) and not has_searchable_word(query):
        raise InvalidRequest(NO_WORDS)
    try:
        return SearchRequest.model_validate({
            "query": query, "given_papers": list(given_papers),
            "params": {**settings.search.model_dump(), **overrides},
            "reference_year": args.reference_year, "exclude": args.exclude})
    except ValidationError as err:
        raise InvalidRequest(describe_invalid(err, SearchRequest, flag_name(FLAGS),
                                              "see `crase search --help`")) from err


def search_papers(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.models.embedding_cache import CachedEncoder
    from crase.models.paper_encoders import paper_encoder
    from crase.run_lifecycle import Callbacks
    from crase.search.pipeline import run_search
    from crase.search.roles.from_settings import build_search_backends, describe_backends

    entries = given_entries(args)
    request = build_request(args, settings, ["(given)"] if entries else [])
    settings = with_model_flags(args, settings)
    with Graph.connect(settings.database) as graph:
        given = resolve_entries(graph, entries) if entries else None
        if given is not None:
            request = request.model_copy(update={"given_papers": given.ids})
            if not args.json:  # the JSON carries them (given_papers)
                print_given(given)
        encoder = paper_encoder(settings.models.paper_encoder)
        backends = build_search_backends(settings, encoder=encoder)
        # Every `crase search` is a new process: the query's vector is kept on disk, beside
        # the idea workflow's, so a query asked again does not load the encoder's weights.
        backends.encoder = CachedEncoder(encoder, settings.var_dir / "embedding-cache")
        print(f"Using {describe_backends(backends)}", file=sys.stderr)
        result = run_search(graph, backends, request,
                            observer=Callbacks(on_items=CountProgress().update),
                            notice=lambda line: print(line, file=sys.stderr))
        hint = None if result.seeds and result.results else no_seed_hint(graph)
        details = read_details(graph, result)
    if args.json:
        data = result_json(result, details)
        if given is not None:
            data["given_papers"] = [asdict(paper) for paper in given.found]
        print(json.dumps(data, indent=2, default=str))
    else:
        print_result(result, settings, details, given.ids if given else ())
    if hint:
        print(f"crase: {hint}", file=sys.stderr)
    for problem in result.problems:  # a partial run: what Semantic Scholar did not give
        print(f"crase: partial: {problem}", file=sys.stderr)
    return 0


def given_entries(args: argparse.Namespace) -> list["ReferenceEntry"]:
    """The papers to start from as the command line names them: each --from, then each
    --from-file's entries (a file that cannot be read ends here, before the database)."""
    if not args.given_papers and not args.given_paper_files:
        return []
    from crase.reference_lists import read_reference_file
    from crase.search.given_papers import typed_entries

    entries = typed_entries(args.given_papers)
    for path in args.given_paper_files:
        entries += read_reference_file(path)
    if not entries:
        raise InvalidRequest("--from names no paper (only empty text); give an id, arXiv "
                             "id, DOI or title")
    return entries


def resolve_entries(graph: "Graph", entries: list["ReferenceEntry"]) -> "GivenPapers":
    """The given papers found in the graph; every entry not found is printed on stderr,
    one a line, before the search is refused (GivenPapersUnknown)."""
    from crase.search.given_papers import require_all_found, resolve_given

    given = resolve_given(graph, entries)
    for entry in given.unknown:
        print(f"crase: not in the graph: {entry}", file=sys.stderr)
    require_all_found(given)
    return given


def print_given(given: "GivenPapers") -> None:
    """One line per paper started from: how it was named and the graph paper found."""
    from crase.search.evidence import clip

    print(f"Starting from {len(given.ids)} given paper{'s' if len(given.ids) != 1 else ''}:")
    for paper in given.found:
        title = clip(tex_to_unicode(paper.title), 70) if paper.title else "(no title)"
        print(f"  {paper.id:<16}  {title}  [by {paper.matched_by}: {clip(paper.entry, 40)}]")


def no_seed_hint(graph: "Graph") -> str:
    """Why a search found no seed (so the walk had nowhere to start), and what to do."""
    if not graph.read("count_papers_and_citations")[0]["papers"]:
        return "no seeds: the graph holds no papers; load a corpus first (crase load DIR)"
    return ("no seeds: no paper matched the query's words; try other words (a term of the "
            "field, a title you know), fewer words, `crase embed` once for the search by "
            "meaning, or load a corpus that covers them (crase load DIR)")


Details = Mapping[str, Mapping[str, Any]]


def read_details(graph: "Graph", result: "SearchResult") -> dict[str, dict[str, Any]]:
    """Title, authors, venue and identifiers of every paper the result names: the returned
    ones and those on their evidence (seeds, edge ends), which are shown by title."""
    ids = {paper.id for paper in result.results}
    for paper in result.results:
        ev = paper.evidence
        ids.update(end for edge in ev.edges() for end in (edge.citing, edge.cited))
        if ev.reached_from:
            ids.add(ev.reached_from)
    return {row["id"]: row for row in graph.read("read_paper_details", ids=sorted(ids))}


def paper_fields(row: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the --json results add to each paper: identifiers, abstract, venue, links."""
    row = row or {}
    return {"arxiv_id": row.get("arxiv_id"), "doi": row.get("doi"),
            "abstract": row.get("abstract"), "authors": row.get("authors") or [],
            "venue": row.get("venue") or row.get("journal_ref"), "links": paper_links(row)}


def result_json(result: "SearchResult", details: Details) -> dict[str, Any]:
    data = result.to_dict()
    for paper in data["results"]:
        paper.update(paper_fields(details.get(paper["id"])))
    return data


AUTHORS_WIDTH = 24  # the authors column of the table


def short_authors(authors: Sequence[str] | None, width: int = AUTHORS_WIDTH) -> str:
    """'First Author et al.' (the name alone for a single author) in `width` characters;
    a long name is cut, never the 'et al.'."""
    from crase.search.evidence import clip

    names = [name for name in authors or [] if name.strip()]
    if not names:
        return "-"
    more = " et al." if len(names) > 1 else ""
    return clip(tex_to_unicode(names[0]), width - len(more)) + more


def print_result(result: "SearchResult", settings: Settings,
                 details: Details | None = None, given: Collection[str] = ()) -> None:
    """The run's summary, one row per paper (authors and a link when `details` has them),
    and two lines of evidence under each, papers named by title; a paper reached from one
    of the `given` papers (those the search started from) names it as such."""
    from crase.run_lifecycle import browser_query
    from crase.search.evidence import clip, describe_order

    details = details or {}
    c = result.counts
    print(f"Run {result.run_id}: {c['results']} papers from |S|={c['seeds']} seeds, "
          f"|V|={c['nodes']}, |E|={c['edges']}; pruned {c['edges_pruned']} edges and "
          f"{c['nodes_dropped']} papers")
    order = c.get("order", {})
    if c.get("results_from_text") and order.get("placed_by") == "walk":
        print(f"The walk ranked {c['results'] - c['results_from_text']}; "
              f"{c['results_from_text']} full-text matches fill the rest (--fill none: "
              f"the walk's list alone)")
    print("Backends: " + ", ".join(f"{k}={v}" for k, v in result.backends.items()))
    print("Plan: " + (" | ".join(result.plan) if result.plan
                      else "none; the walk starts from the given papers" if given
                      else "no sub-queries; the query's own text ranking seeds"))
    if order:
        print("Order: " + describe_order(order))
    sub_queries: dict[str, str] = {}
    for seed in result.seeds:
        sub_queries.setdefault(seed.paper_id, seed_source(seed))
    titles = {pid: row.get("title") or "" for pid, row in details.items()}
    scores = [paper.score for paper in result.results]
    print(f"{'rank':>4}  {'score':>8}  {'year':>4}  {'id':<10}  {'authors':<{AUTHORS_WIDTH}}  "
          f"{'link':<38}  title")
    for paper in result.results:
        row = details.get(paper.id, {})
        authors = short_authors(row.get("authors") or paper.authors)
        link = best_link(row) or "-"
        print(f"{paper.rank:>4}  {paper.score:8.5f}  {paper.year or '':>4}  {paper.id:<10}  "
              f"{authors:<{AUTHORS_WIDTH}}  {link:<38}  {clip(tex_to_unicode(paper.title), 90)}")
        for line in describe_evidence(paper, sub_queries.get(paper.id), titles, scores,
                                      given, matched_text(result.query)):
            print(f"{'':>6}{line}")
    total = sum(result.timings.values())
    print(f"Time {total:.2f} s: " + ", ".join(f"{k} {v:.2f}" for k, v in result.timings.items()))
    print(f"Open it in Neo4j Browser ({settings.database.browser_url()}):\n  "
          f"{browser_query(result.run_id)}")


def seed_source(seed: "Seed") -> str:
    from crase.search.seeds import FIXED, QUERY_ITSELF

    if seed.sub_query_index == QUERY_ITSELF:
        return f"the query itself, text rank {seed.relevance_rank}"
    if seed.sub_query_index == FIXED:
        return "the caller"
    return f"sub-query {seed.sub_query_index}, text rank {seed.relevance_rank}"


def matched_text(query: str) -> str:
    """What a full-text match matched: the query, or (a search from papers alone asks its
    text lists with them) the given papers' titles."""
    return "the query" if query.strip() else "the given papers' titles"


def describe_evidence(paper: "RankedPaper", seeded_by: str | None,
                      titles: Mapping[str, str] | None = None,
                      scores: Sequence[float] | None = None,
                      given: Collection[str] = (), text: str = "the query") -> list[str]:
    """Short lines: how the walk reached the paper (other papers named by title where
    `titles` has them; a seed among `given` as the given paper it is), what its score
    means among `scores` (the whole list's), and its best-grounded edge; texts end at a
    word boundary. Under the learned order, one more line: the features that placed it,
    with their terms of the model's score."""
    placed = paper.evidence.ranking_features
    if not placed:
        return describe_walk_evidence(paper, seeded_by, titles, scores, given, text)
    # The score is the model's (a sum of terms, any sign), not a walk's share.
    # Largest first, also for a run read back from its stored JSON (keys sorted there).
    largest = sorted(placed.items(), key=lambda item: (-abs(item[1]), item[0]))
    return [*describe_walk_evidence(paper, seeded_by, titles, None, given, text),
            f"model score {paper.score:+.3f}, placed by: " + ", ".join(
                f"{name} {value:+.2f}" for name, value in largest)]


def describe_walk_evidence(paper: "RankedPaper", seeded_by: str | None,
                           titles: Mapping[str, str] | None = None,
                           scores: Sequence[float] | None = None,
                           given: Collection[str] = (), text: str = "the query") -> list[str]:
    from crase.search.evidence import clip, describe_delta, describe_score

    ev = paper.evidence
    titles = titles or {}
    score = [describe_score(paper.score, paper.rank, scores)] if scores else []
    if ev.text_match:
        return [f"full-text match of {text}; the evidence graph did not reach it", *score]
    if ev.seed:
        how = f"seed (found by {seeded_by})" if seeded_by else "seed"
        if ev.restart_share is not None:
            how += f", {ev.restart_share:.0%} of the walk's restart mass"
    elif ev.path:
        hops = len(ev.path)
        origin = "given paper" if ev.reached_from in given else "seed"
        how = (f"{hops} hop{'s' if hops > 1 else ''} from {origin} "
               f"{name_paper(ev.reached_from or '', titles)}")
        if hops == 1:  # the seed is the other end of the one citation
            how += " (cites it)" if ev.path[0].citing == paper.id else " (cited by it)"
    else:
        how = "reached by the walk"
    edges = [e for e in ev.edges() if e.citing_claim]
    if not edges:
        # A walk without Delta has no claims: name the citation that carried the walk
        # here, and the publisher's mark on it where the corpus has one.
        if len(ev.path) > 1:
            how += "; via: " + describe_citation(ev.path[-1], paper.id, titles)
        if ev.path and ev.path[-1].influential:
            how += " (a citation marked influential)"
        return [how, *score]
    best = max(edges, key=lambda e: e.delta)
    return [f"{how}; strongest edge: {describe_citation(best, paper.id, titles)}, "
            f"{describe_delta(best.delta)}", *score,
            f"  \"{clip(best.citing_claim or '', 70)}\" grounded by "
            f"\"{clip(best.cited_claim or '', 70)}\" "
            f"(entailment {best.support or 0:.2f})"]


def name_paper(paper_id: str, titles: Mapping[str, str]) -> str:
    """A paper by its title (cut at a word boundary), else by its id."""
    from crase.search.evidence import clip

    title = titles.get(paper_id)
    return f"\"{clip(title, 60)}\"" if title else paper_id


def describe_citation(edge: "EdgeEvidence", here: str, titles: Mapping[str, str]) -> str:
    """The citation seen from the paper `here`: 'cites "X"' or 'cited by "Y"'."""
    if edge.citing == here:
        return f"cites {name_paper(edge.cited, titles)}"
    if edge.cited == here:
        return f"cited by {name_paper(edge.citing, titles)}"
    return f"{name_paper(edge.citing, titles)} cites {name_paper(edge.cited, titles)}"


def score_edges(args: argparse.Namespace, settings: Settings) -> int:
    from crase.graph import Graph
    from crase.search.roles.from_settings import describe_backends
    from crase.search.scoring_worker import ScoringReport, score_corpus, scoring_backends

    if args.engine == "local" and (args.workers is not None or args.ray_address is not None):
        raise InvalidRequest("--workers and --ray-address apply to the Ray engine; add "
                             "--engine ray, or leave them out to score in this process")
    settings = with_model_flags(args, settings)
    factory = functools.partial(scoring_backends, cache_size=args.cache_size)
    backends = factory(settings)
    print(f"Using {describe_backends(backends)}", file=sys.stderr)
    # Rate and ETA redrawn on a terminal; plain periodic lines in a pipe or log.
    progress = CountProgress().update
    report: ScoringReport
    if args.engine == "ray":
        from crase.search.ray_scoring import score_corpus_on_ray

        report = score_corpus_on_ray(settings, factory, args.batch_size, args.limit,
                                     args.workers or 2, args.ray_address, progress)
    else:
        with Graph.connect(settings.database) as graph:
            report = score_corpus(graph, backends, settings.search.theta, args.batch_size,
                                  args.limit, progress)
    print(report.summary())
    return 1 if report.batches_failed else 0
