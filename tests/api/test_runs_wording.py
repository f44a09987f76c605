"""Evidence worded by the run's weighting, place by place: a uniform run's edges are
unweighted citation edges (no Delta, no claim pair, no scorer) in `crase show`, its JSON,
GET /runs/{id}, its evidence graph and the JSON export, even where another run stored
Delta on the same edges; a coverage run keeps its Delta. Also the run's prior and
derivative works (`crase show --prior/--derivative`, GET /runs/{id}, the export) and the
connector (`crase connect`, GET /connections) on rows of data/sample."""

import json
import re
from pathlib import Path

import pytest
import rispy
from litestar.testing import TestClient

from crase.api.cli import main
from crase.graph import Graph
from tests.api.test_runs_command import write_sample_slice

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUERY = "black hole in three dimensional space time with a negative cosmological constant"
DELTA_NUMBER = re.compile(r"Delta \d")


def search(capsys: pytest.CaptureFixture[str], weighting: str) -> tuple[str, str]:
    """The run id and what the search printed."""
    # The walk's order: the learned one returns every prior work of this small slice, and
    # the export below needs prior works the list did not return.
    assert main(["search", QUERY, "-k", "12", "--weighting", weighting,
                 "--order", "walk"]) == 0
    printed = capsys.readouterr().out
    return printed.split()[1].rstrip(":"), printed


def test_a_uniform_run_names_no_delta_anywhere(graph: Graph, cli_env: Path,
                                               client: TestClient,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(write_sample_slice(cli_env / "slice")), "--quiet"]) == 0
    capsys.readouterr()
    scored, scored_printed = search(capsys, "coverage")  # stores Delta and claims ...
    uniform, uniform_printed = search(capsys, "uniform")  # ... on edges this run walks
    assert DELTA_NUMBER.search(scored_printed)
    assert not DELTA_NUMBER.search(uniform_printed) and "grounded by" not in uniform_printed

    assert main(["show", uniform]) == 0
    shown = capsys.readouterr().out
    assert not DELTA_NUMBER.search(shown) and "grounded by" not in shown
    assert main(["show", scored]) == 0
    assert DELTA_NUMBER.search(capsys.readouterr().out)

    assert main(["show", uniform, "--json"]) == 0
    cli_view = json.loads(capsys.readouterr().out)
    http_view = client.get(f"/runs/{uniform}").json()
    export = json.loads(client.get(f"/runs/{uniform}/export?format=json").text)
    for results in (cli_view["results"], http_view["results"], export["results"]):
        edges = [e for r in results for e in r["evidence"]["path"]
                 + r["evidence"]["strongest_edges"]]
        assert edges and all(e["delta"] is None and e["edge"] == "unweighted citation edge"
                             and "citing_claim" not in e for e in edges)
    view = client.get(f"/runs/{uniform}/graph").json()
    assert view["scorer"] is None and view["edge_weight"] == "unweighted citation edge"
    assert all(edge["delta"] is None for edge in view["edges"])

    weighted = client.get(f"/runs/{scored}").json()
    edges = [e for r in weighted["results"] for e in r["evidence"]["path"]]
    assert edges and all(isinstance(e["delta"], float) for e in edges)
    assert client.get(f"/runs/{scored}/graph").json()["scorer"]

    # Prior and derivative works: the same lists in the view, the export and the command.
    prior = http_view["prior_works"]
    assert prior and prior == export["prior_works"] == cli_view["prior_works"]
    assert all(work["count"] >= 2 and len(work["by_ranks"]) == work["count"]
               and work["why"].startswith(f"cited by {work['count']} of the 12")
               for work in prior)
    assert [w["count"] for w in prior] == sorted((w["count"] for w in prior), reverse=True)
    assert main(["show", uniform, "--prior", "--derivative"]) == 0
    printed = capsys.readouterr().out
    assert "Prior works" in printed and "Derivative works" in printed
    assert prior[0]["why"] in printed
    # ... and, on request, in the reference-manager formats, after the results.
    not_returned = [w for w in prior if w["rank"] is None]
    ris = client.get(f"/runs/{uniform}/export", params={"format": "ris", "related": True})
    tagged = [r["id"] for r in rispy.loads(ris.text)
              if r.get("keywords") == ["Crase prior work"]]
    assert not_returned and tagged == [w["id"] for w in not_returned]
    assert "related" in ris.headers["content-disposition"]
    plain = client.get(f"/runs/{uniform}/export", params={"format": "ris"}).text
    assert len(rispy.loads(plain)) == len(http_view["results"])
    out = cli_env / "related.bib"
    assert main(["export", uniform, "--related", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").count("Crase prior work") == len(not_returned)


def test_two_papers_are_connected_by_their_shortest_paths(
        graph: Graph, cli_env: Path, client: TestClient,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(write_sample_slice(cli_env / "slice")), "--quiet"]) == 0
    capsys.readouterr()
    rows = [line.split(",") for line in
            (cli_env / "slice" / "citations.csv").read_text().splitlines()[1:]]
    # A two-step path: a cites b, b cites c, and a and c share no edge.
    linked = {frozenset(row) for row in rows}
    cites: dict[str, set[str]] = {}
    for citing, cited in rows:
        cites.setdefault(citing, set()).add(cited)
    a, b, c = next((a, b, c) for a, bs in sorted(cites.items()) for b in sorted(bs)
                   for c in sorted(cites.get(b, ())) if c != a and frozenset((a, c)) not in linked)
    answer = client.get("/connections", params={"source": a, "target": c}).json()
    assert answer["length"] == 2
    assert {"papers": [a, b, c], "steps": [{"citing": a, "cited": b},
                                           {"citing": b, "cited": c}]} in answer["paths"]
    assert main(["connect", a, c]) == 0
    printed = capsys.readouterr().out
    assert f"{a} -> {b} -> {c}" in printed and " cites " in printed
    assert main(["connect", a, c, "--max-steps", "1"]) == 1
    assert client.get("/connections", params={"source": a, "target": a}).status_code == 422
    assert client.get("/connections", params={"source": a, "target": "nope"}).status_code == 404
