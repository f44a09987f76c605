"""`crase grow` against the OpenAlex stand-in over the committed hep-th sample, on the real
Neo4j: a 20-entry .bib grown by references and citers (list calls per paper, nothing
duplicated, a search from the same file with no further call), resuming after a 429
storm and after the budget ran out without a call repeated or a work lost, the faults the
API documents, a refused key, and unknown entries listed."""

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.bench.openalex_standin import OpenAlexStandIn
from crase.graph import Graph
from crase.ingest.request_cache import request_key
from crase.paper_identity import normalise_doi
from tests.openalex_standin_fixture import standin_fixture
from tests.sample_slice import SAMPLE

pytestmark = pytest.mark.integration

KEY = "standin-key-7f3a"
ROWS = [json.loads(line) for line in (SAMPLE / "papers.jsonl").open()]
NUMBER = {row["id"]: n for n, row in enumerate(ROWS, start=1)}


def most_cited(count: int) -> list[dict[str, Any]]:
    lines = (SAMPLE / "citations.csv").read_text().splitlines()[1:]
    cited = Counter(line.split(",")[1] for line in lines)
    return sorted(ROWS, key=lambda row: (-cited[row["id"]], row["id"]))[:count]


GIVEN = most_cited(20)


def bibtex(rows: list[dict[str, Any]]) -> str:
    """A Zotero-like export: some entries with an eprint, some with a title only."""
    entries = []
    for n, row in enumerate(rows):
        fields = [f"  title = {{{row['title']}}}", f"  year = {{{row['year']}}}"]
        if n % 4 != 3:
            fields += [f"  eprint = {{{row['arxiv_id']}}}", "  archivePrefix = {arXiv}"]
        entries.append(f"@article{{entry{n},\n" + ",\n".join(fields) + "\n}\n")
    return "\n".join(entries)


standin = standin_fixture(KEY)


@pytest.fixture
def fresh(standin: OpenAlexStandIn) -> OpenAlexStandIn:
    standin.reset()
    standin.daily_budget_usd = None
    return standin


@pytest.fixture
def env(cli_env: Path, monkeypatch: pytest.MonkeyPatch, fresh: OpenAlexStandIn) -> Path:
    for name, value in {"ENABLED": "true", "OPENALEX_URL": fresh.url,
                        "OPENALEX_API_KEY": KEY, "OPENALEX_REQUESTS_PER_SECOND": "100",
                        "MAX_RETRIES": "4", "BACKOFF_BASE_S": "0.01",
                        "BACKOFF_MAX_S": "0.05", "TIMEOUT_S": "5"}.items():
        monkeypatch.setenv(f"CRASE_PROVIDERS__{name}", value)
    bib = cli_env / "refs.bib"
    bib.write_text(bibtex(GIVEN), encoding="utf-8")
    return bib


def grow(bib: Path, *flags: str) -> int:
    return main(["grow", "--from-file", str(bib), "--citers", "--max-papers", "5000",
                 "--no-embed", *flags])


def preload(graph: Graph, rows: list[dict[str, Any]]) -> None:
    """Papers a corpus load left: the sample's ids, arXiv ids as ingest keeps them."""
    graph.write("merge_papers", rows=[
        {"id": row["id"], "props": {"title": row["title"], "arxiv_id": row["arxiv_id"],
                                    "year": row["year"]}} for row in rows])


def duplicates(graph: Graph, key: str) -> list[Any]:
    with graph.driver.session(database=graph.database) as session:
        return [r["v"] for r in session.run(
            f"MATCH (p:Paper) WHERE p.{key} IS NOT NULL WITH p.{key} AS v, count(*) AS n "
            "WHERE n > 1 RETURN v")]


def graph_shape(graph: Graph) -> tuple[set[str], set[tuple[str, str]]]:
    with graph.driver.session(database=graph.database) as session:
        nodes = {r["a"] for r in session.run("MATCH (p:Paper) RETURN p.arxiv_id AS a")}
        edges = {(r["a"], r["b"]) for r in session.run(
            "MATCH (a:Paper)-[:CITES]->(b:Paper) RETURN a.arxiv_id AS a, b.arxiv_id AS b")}
    return nodes, edges


def answered_keys(standin: OpenAlexStandIn) -> list[str]:
    """The request keys (credentials left out) of every request answered 200 or 404."""
    return [request_key(a.path, {k: v for k, v in a.params.items()
                                 if k not in ("api_key", "mailto")})
            for a in standin.seen() if a.status in (200, 301, 404)]


def test_a_bib_grows_by_references_and_citers_with_nothing_duplicated(
        graph: Graph, env: Path, fresh: OpenAlexStandIn,
        capsys: pytest.CaptureFixture[str]) -> None:
    preload(graph, ROWS[:1000])
    assert grow(env) == 0
    out = capsys.readouterr().out
    assert "20 of 20 given" in out
    assert duplicates(graph, "arxiv_id") == [] and duplicates(graph, "doi") == []
    assert duplicates(graph, "openalex_id") == []
    papers = graph.read("read_papers", ids=[row["id"] for row in ROWS[:1000]])
    assert len(papers) == 1000  # the loaded papers kept their ids
    fetched = int(re.search(r"papers +([\d,]+) fetched", out).group(1).replace(",", ""))
    assert fetched > 1500
    lists = [a for a in fresh.seen("works") if a.path == "works" and "filter" in a.params]
    assert len(lists) * 100 <= fetched, f"{len(lists)} list calls for {fetched} papers"
    assert all(a.key == KEY for a in fresh.seen())
    assert fresh.charged_usd <= 1.0
    print(out)

    before = len(fresh.seen())
    assert main(["search", "--from-file", str(env), "-k", "10", "--fill", "none"]) == 0
    assert len(fresh.seen()) == before  # the grown graph answers it: no call


def test_the_graph_holds_the_works_their_references_and_their_citers(
        graph: Graph, env: Path, fresh: OpenAlexStandIn) -> None:
    assert grow(env) == 0
    nodes, edges = graph_shape(graph)
    lines = (SAMPLE / "citations.csv").read_text().splitlines()[1:]
    pairs = {tuple(line.split(",")) for line in lines}
    arxiv = {row["id"]: row["arxiv_id"] for row in ROWS}
    given = {row["id"] for row in GIVEN}
    expected = given | {b for a, b in pairs if a in given} | {a for a, b in pairs if b in given}
    assert nodes == {arxiv[i] for i in expected}
    inside = {(arxiv[a], arxiv[b]) for a, b in pairs if a in expected and b in expected}
    assert edges <= inside
    # An edge is missed only where the citing work names a merged work by its old id and
    # that id never came to be asked (the work came as a citer, under its new id).
    merged = {arxiv[r["id"]] for r in ROWS if NUMBER[r["id"]] % 25 == 0}
    assert all(cited in merged for _, cited in inside - edges)
    given_arxiv = {arxiv[i] for i in given}
    to_merged = {(a, b) for a, b in inside if a in given_arxiv and b in merged}
    assert to_merged and to_merged <= edges  # the 301 was followed: the new id is linked
    with graph.driver.session(database=graph.database) as session:
        routes = Counter(r["route"].split(":")[0] for r in session.run(
            "MATCH (p:Paper) RETURN p.openalex_route AS route"))
    assert routes["given"] == 20 and routes["reference"] > 0 and routes["citer"] > 0


def test_an_interrupted_grow_resumes_without_a_call_repeated_or_a_work_lost(
        graph: Graph, env: Path, fresh: OpenAlexStandIn,
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fresh.fault(r"filter=cites:", status=429, times=None)  # a storm on the citers, for good
    assert grow(env) == 2
    err = capsys.readouterr().err
    assert "ProviderRateLimited" in err and "Traceback" not in err and KEY not in err
    first = answered_keys(fresh)
    fresh.reset()
    # On the way: a 500 burst, a 429 without Retry-After, OpenAlex's throttle (403 with
    # Retry-After) and a page cut short, each fewer times than the retries allow.
    fresh.fault(r"filter=openalex_id:", status=500, times=3)
    fresh.fault(r"filter=doi:", status=429, times=2)
    fresh.fault(r"filter=cites:", status=403, retry_after="0", times=2)
    fresh.fault(r"filter=cites:", truncate=True, times=1)
    assert grow(env) == 0
    second = answered_keys(fresh)
    assert not set(first) & set(second)  # nothing answered before was asked again
    resumed_calls = capsys.readouterr().out
    assert re.search(r"calls +\d+ list, 0 singleton, 0 search", resumed_calls)
    resumed = graph_shape(graph)

    from tests.conftest import clean_graph
    clean_graph(graph)
    fresh.reset()
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "clean-var"))
    assert grow(env) == 0
    assert graph_shape(graph) == resumed  # the same graph as a grow never interrupted


def test_the_daily_budget_is_never_passed_and_the_next_day_resumes(
        graph: Graph, env: Path, fresh: OpenAlexStandIn, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRASE_PROVIDERS__OPENALEX_DAILY_BUDGET_USD", "0.0005")
    assert grow(env) == 2
    err = capsys.readouterr().err
    assert "ProviderBudgetSpent" in err and "OPENALEX_DAILY_BUDGET_USD" in err
    assert fresh.charged_usd <= 0.0005 + 1e-9
    first = answered_keys(fresh)
    monkeypatch.setenv("CRASE_PROVIDERS__OPENALEX_DAILY_BUDGET_USD", "1.0")
    assert grow(env) == 0
    assert not set(first) & set(answered_keys(fresh)[len(first):])


def test_a_refused_key_stops_with_one_line_naming_the_setting(
        graph: Graph, env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CRASE_PROVIDERS__OPENALEX_API_KEY", "wrong-key-1234")
    assert grow(env) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "CRASE_PROVIDERS__OPENALEX_API_KEY" in lines[0]
    assert "ProviderKeyRefused" in lines[0] and "wrong-key-1234" not in captured.err


def test_unknown_entries_are_listed_and_the_key_is_in_no_cached_file(
        graph: Graph, env: Path, cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["grow", "--from", "W4000000001", "--from", "W1234",
                 "--from", "A title that names no paper of the sample whatsoever",
                 "--depth", "0", "--no-embed"])
    assert code == 0
    captured = capsys.readouterr()
    assert "1 of 3 given" in captured.out
    assert "not in OpenAlex" in captured.err and "W1234" in captured.err
    assert "whatsoever" in captured.err
    cached = list((cli_env / "var" / "openalex").rglob("*.json"))
    assert cached and not any(KEY in path.read_text() for path in cached)


def test_a_doi_in_any_spelling_merges_with_the_paper_the_graph_holds(
        graph: Graph, env: Path, fresh: OpenAlexStandIn) -> None:
    row = next(r for r in GIVEN if NUMBER[r["id"]] % 3 == 0)  # a work with a journal DOI
    doi = fresh.doi(row["id"])  # https://doi.org/10.5555/hepth....
    graph.write("merge_papers", rows=[{"id": "mine", "props": {
        "title": row["title"], "doi": normalise_doi(doi.upper())}}])
    assert main(["grow", "--from", doi.upper().replace("HTTPS://DOI.ORG/", "doi:"),
                 "--depth", "0", "--no-embed"]) == 0
    found = graph.read("read_papers", ids=["mine"])
    assert found and found[0]["arxiv_id"] == row["arxiv_id"]  # merged, and gained its id
    assert duplicates(graph, "doi") == []
