"""`crase runs`, `crase show` and `crase export` on runs made by `crase search` over rows
of data/sample and by `crase idea` over the idea fixture corpus."""

import csv
import io
import json
from pathlib import Path

import bibtexparser
import pytest
import rispy
from litestar.testing import TestClient

from crase.api.cli import main
from crase.graph import Graph
from tests.idea.corpus import IDEA, load_fixture_corpus
from tests.sample_slice import SAMPLE

pytestmark = pytest.mark.integration

QUERY = "black hole in three dimensional space time with a negative cosmological constant"


def write_sample_slice(folder: Path, papers: int = 300) -> Path:
    """The first sample papers and the citations among them, as a corpus folder: real
    rows, "and Jorge Zanelli" (9204099) among them."""
    folder.mkdir()
    lines = (SAMPLE / "papers.jsonl").read_text(encoding="utf-8").splitlines()[:papers]
    ids = {json.loads(line)["id"] for line in lines}
    (folder / "papers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    edges = (SAMPLE / "citations.csv").read_text(encoding="utf-8").splitlines()
    kept = [edge for edge in edges[1:] if set(edge.split(",")) <= ids]
    (folder / "citations.csv").write_text("\n".join([edges[0], *kept]) + "\n",
                                          encoding="utf-8")
    return folder


def table(printed: str) -> list[str]:
    """The lines of a search's printout from its header line to its ranked table's end."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("rank"))
    end = next(i for i, line in enumerate(lines) if line.startswith("Time "))
    return [lines[0], *lines[start:end]]


def test_a_search_is_found_shown_and_exported_again(
        graph: Graph, cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(write_sample_slice(cli_env / "slice")), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", QUERY, "-k", "8"]) == 0
    searched = capsys.readouterr().out
    run_id = searched.split()[1].rstrip(":")
    assert "9204099" in searched

    assert main(["runs"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0] == "Runs 1-1 of 1, newest first"
    assert listed[2].split()[2:6] == [run_id, "search", "done", "8"]
    assert QUERY[:40] in listed[2]
    assert main(["runs", "--kind", "idea"]) == 0
    assert capsys.readouterr().out == "No runs yet: start one with `crase search \"...\"` or " \
                                      "`crase idea \"...\"`.\n"
    assert main(["runs", "--page", "2"]) == 0
    assert capsys.readouterr().out == "No runs on page 2 (1 in all).\n"

    assert main(["show", run_id]) == 0
    shown = capsys.readouterr().out
    assert table(shown) == table(searched)
    papers = shown[shown.index("Papers:\n"):]
    zanelli = next(line for line in papers.splitlines() if "Jorge Zanelli" in line)
    assert zanelli.split(";")[:3] == ["   1  Máximo Bañados", " Claudio Teitelboim",
                                      " Jorge Zanelli"]
    assert "and Jorge" not in papers
    assert "https://arxiv.org/abs/hep-th/9204099" in papers
    assert main(["show", run_id, "--json"]) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["id"] == run_id and view["outcome"] is None and len(view["results"]) == 8
    first = view["results"][0]
    assert {"arxiv_id", "doi", "abstract", "authors", "venue", "year", "links"} <= set(first)

    bib = cli_env / "run.bib"
    assert main(["export", run_id, "--out", str(bib)]) == 0
    entries = bibtexparser.parse_string(bib.read_text(encoding="utf-8")).entries
    assert len(entries) == 8
    btz = next(e for e in entries if e.key.endswith("_9204099"))
    assert btz.fields_dict["author"].value.endswith("Claudio Teitelboim and Jorge Zanelli")
    assert btz.fields_dict["url"].value == "https://arxiv.org/abs/hep-th/9204099"
    assert main(["export", run_id, "--format", "ris"]) == 0
    records = rispy.loads(capsys.readouterr().out)
    btz_ris = next(r for r in records if r["id"] == "9204099")
    assert btz_ris["authors"][0] == "Máximo Bañados"
    assert main(["export", run_id, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["id"] for row in rows] == [r["id"] for r in view["results"]]
    assert main(["export", run_id, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["run"]["id"] == run_id


def test_runs_that_are_not_there(graph: Graph, cli_env: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "no-such-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crase: RunNotFound: no run with id 'no-such-run'")
    assert "crase runs" in err
    assert main(["export", "no-such-run", "--format", "ris"]) == 2
    assert "RunNotFound" in capsys.readouterr().err
    assert main(["export", "x", "--out", str(cli_env / "missing" / "x.bib")]) == 2
    assert "its folder does not exist" in capsys.readouterr().err
    assert main(["runs", "--page", "0"]) == 2
    assert main(["export", "x", "--format", "docx"]) == 2

    graph.write("create_run", id="r-open", kind="search", query="still going", params="{}",
                started="2026-11-01T10:00:00Z", backends="{}", properties={})
    assert main(["show", "r-open"]) == 1
    assert capsys.readouterr().out == "Run r-open (search) is running\nQuery: still going\n"
    assert main(["export", "r-open"]) == 2
    assert "RunNotFinished: run r-open is running" in capsys.readouterr().err


def test_an_idea_run_is_shown_with_its_works_and_outcome(
        graph: Graph, cli_env: Path, client: TestClient,
        capsys: pytest.CaptureFixture[str]) -> None:
    load_fixture_corpus(graph)
    main(["idea", IDEA, "--exclude", "src", "--no-providers"])
    printed = capsys.readouterr().out
    run_id = printed.split()[1].rstrip(":")
    outcome = printed.split()[3].rstrip(";")
    assert outcome in ("done", "partial")

    assert main(["show", run_id]) == 0
    shown = capsys.readouterr().out
    # The printer of `crase idea`, on the run rebuilt from its audit: the same lines (the
    # stored audit keeps the backends sorted by role).
    same = shown.splitlines()[:len(printed.splitlines())]
    assert without_backends(same) == without_backends(printed.splitlines())
    assert backends_of(same) == backends_of(printed.splitlines())
    assert shown.count("\n1. [") == 1 and "\n5. [" in shown
    assert "Papers:" in shown[len(printed):]

    assert main(["runs", "--kind", "idea"]) == 0
    assert run_id in capsys.readouterr().out
    view = client.get(f"/runs/{run_id}").json()
    assert (view["kind"], view["outcome"]) == ("idea", outcome)


def without_backends(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("Backends: ")]


def backends_of(lines: list[str]) -> set[str]:
    line = next(line for line in lines if line.startswith("Backends: "))
    return set(line.removeprefix("Backends: ").split(", "))
