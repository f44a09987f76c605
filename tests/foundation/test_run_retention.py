"""What a Run keeps of its request (a bounded summary: large lists by count and sha256),
and `crase runs prune`: the retention rule, never a starred or exported run, and what it
frees. A Run that kept its whole body let 20 requests of 9 MB write 700 MB."""

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.run_lifecycle import (
    SHOWN_ITEMS,
    STORED_CHARS,
    RunRecorder,
    plain_properties,
    summarise_request,
    to_json,
)
from crase.run_retention import mark_exported, prune_runs, star_run
from crase.search.request import SearchRequest
from crase.settings import RunSettings


def heavy_request(number: int) -> dict[str, Any]:
    """The largest request the schema takes: 10,000 excluded ids of 900 characters (9 MB)."""
    return SearchRequest(query=f"black holes, run {number}", exclude=[
        f"{number:03d}-{n:05d}-" + "x" * 890 for n in range(10_000)]).model_dump(mode="json")


def test_a_large_list_is_kept_by_its_count_hash_and_first_items() -> None:
    request = heavy_request(1)
    summary = summarise_request(request)
    excluded = summary["exclude"]
    assert excluded["count"] == 10_000
    assert excluded["sha256"] == hashlib.sha256(to_json(request["exclude"]).encode()
                                                ).hexdigest()
    assert excluded["first"] == request["exclude"][:SHOWN_ITEMS]
    assert summary["query"] == "black holes, run 1" and summary["params"] == request["params"]
    assert len(to_json(summary)) < 8_000 < len(to_json(request)) // 1000
    # Two lists that differ in one item differ in their hash.
    other = heavy_request(1)
    other["exclude"][-1] += "y"
    assert summarise_request(other)["exclude"]["sha256"] != excluded["sha256"]


def test_a_small_request_is_kept_whole_and_a_long_text_by_its_length() -> None:
    small = {"query": "tachyon condensation", "given_papers": ["9901001", "9902002"],
             "params": {"k": 5, "tau": 0.1}}
    assert summarise_request(small) == small
    text = "z" * (STORED_CHARS + 1)
    assert summarise_request({"idea": text})["idea"] == {
        "chars": STORED_CHARS + 1, "sha256": hashlib.sha256(json.dumps(text).encode()
                                                            ).hexdigest(),
        "start": text[:200]}


def test_the_plain_properties_of_a_summary_are_its_count_and_hash() -> None:
    properties = plain_properties(summarise_request(heavy_request(2)))
    assert properties["exclude_count"] == 10_000
    assert len(str(properties["exclude_sha256"])) == 64
    assert "exclude" not in properties and properties["k"] == 50


def stored_chars(graph: Graph) -> int:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (r:Run) RETURN sum(reduce(total = 0, key IN keys(r) | "
                             "total + CASE WHEN r[key] IS :: STRING THEN size(r[key]) "
                             "WHEN r[key] IS :: LIST<ANY> THEN size(r[key]) ELSE 0 END)) "
                             "AS chars").single()
    assert record is not None
    return int(record["chars"] or 0)


def record_run(graph: Graph, run_id: str, params: dict[str, Any],
               status: str = "done") -> None:
    recorder = RunRecorder(graph, run_id)
    recorder.open("search", str(params.get("query", "")), params, {})
    if status != "running":
        recorder.close(status, [], {}, {}, {}, None)


@pytest.mark.integration
def test_twenty_requests_of_nine_megabytes_store_under_a_megabyte(graph: Graph) -> None:
    for number in range(20):
        record_run(graph, f"heavy-{number}", heavy_request(number), "cancelled")
    chars = stored_chars(graph)
    print(f"20 runs of 9 MB requests store {chars:,} characters")
    assert chars < 1_000_000


@pytest.mark.integration
def test_prune_keeps_the_newest_the_recent_the_starred_the_exported_and_the_open(
        graph: Graph) -> None:
    for number in range(8):
        record_run(graph, f"run-{number}", heavy_request(number),
                   "running" if number == 0 else "done")
    star_run(graph, "run-1")
    mark_exported(graph, "run-2")
    star_run(graph, "run-3")
    star_run(graph, "run-3", starred=False)  # unstarred: may go again
    rules = RunSettings(keep_runs=2, keep_days=30)
    # Today every run is recent: none goes.
    assert prune_runs(graph, rules).runs == 0
    later = datetime.now(UTC) + timedelta(days=31)
    dry = prune_runs(graph, rules, now=later, dry_run=True)
    # Finished: run-1..7; the newest two (6, 7) stay, 1 is starred, 2 exported, 0 open.
    assert (dry.runs, dry.dry_run) == (3, True)
    before = stored_chars(graph)
    report = prune_runs(graph, rules, now=later)
    assert report.runs == 3 and report.chars == dry.chars > 0
    assert before - stored_chars(graph) == report.chars  # it frees what it says
    with graph.driver.session(database=graph.database) as session:
        left = sorted(record["id"] for record in session.run("MATCH (r:Run) RETURN r.id AS id"))
    assert left == ["run-0", "run-1", "run-2", "run-6", "run-7"]
    assert prune_runs(graph, rules, now=later).runs == 0


@pytest.mark.integration
def test_crase_runs_prune_prints_what_it_frees(
        graph: Graph, cli_env: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for number in range(3):
        record_run(graph, f"old-{number}", heavy_request(number))
    monkeypatch.setenv("CRASE_RUNS__KEEP_RUNS", "1")
    monkeypatch.setenv("CRASE_RUNS__KEEP_DAYS", "0")
    assert main(["runs", "star", "old-0"]) == 0
    assert main(["runs", "prune", "--dry-run"]) == 0
    assert "would prune 1 runs" in capsys.readouterr().out
    assert main(["runs", "prune"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pruned 1 runs: 0 links to papers and ")
    assert "starred and exported runs" in out
    assert main(["runs", "star", "no-such-run"]) == 2
    assert "RunNotFound: no run with id 'no-such-run'" in capsys.readouterr().err
