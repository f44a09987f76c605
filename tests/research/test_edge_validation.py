"""Human validation of the evidence graph: a blinded sample of a real search run's edges
(the API tests' corpus, searched with coverage weighting and tau 0.2), annotators' sheets
filled here, imported and reported; the corpus-wide source; the command line and the HTTP
routes."""

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.cli import main
from crase.api.run_views import evidence_graph, read_run_record
from crase.errors import EdgeValidationError
from crase.graph import Graph
from crase.research.edge_validation import (
    SHEET_COLUMNS,
    EdgeSource,
    JudgedEdge,
    SampleRequest,
    corpus_source,
    export_validation_sample,
    import_labels,
    report_validation,
    run_source,
    sample_edges,
)
from crase.settings import Settings
from tests.api.conftest import (  # noqa: F401  (fixtures)
    api_settings,
    client,
    corpus,
    finished_run,
)

pytestmark = pytest.mark.integration

HIDDEN = {"delta", "decision", "retained", "reason", "verdict", "theta", "tau"}


def source_of(graph: Graph, run: dict[str, Any]) -> EdgeSource:
    return run_source(evidence_graph(graph, run["id"], None), read_run_record(graph, run["id"])
                      or {"backends": {}})


def keys_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


def fill_csv(path: Path, labels: dict[str, str]) -> None:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["label"] = labels[row["item_id"]]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=SHEET_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def flipped(decision: str) -> str:
    return "prune" if decision == "retain" else "retain"


def test_a_run_sample_is_blinded_and_in_the_stated_proportions(
        graph: Graph, finished_run: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    source = source_of(graph, finished_run)
    assert source.kind == "run" and source.extractor
    out = tmp_path / "export"
    # The run pruned few edges between papers with claims: 3 edges, two thirds retained.
    result = export_validation_sample(graph, source, SampleRequest(3, 2 / 3, ("A", "B", "C"),
                                                                   7), out)
    c = result.counts
    assert (c["sampled"], c["sampled_retained"], c["sampled_pruned"]) == (3, 2, 1)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["items.json", "key.json", *(f"annotator_{n}.{x}" for n in "ABC" for x in ("csv",
                                                                                 "json"))])
    # What annotators get says nothing of the decision.
    for name in ["items.json", "annotator_A.json"]:
        assert not keys_in(json.loads((out / name).read_text())) & HIDDEN, name
    with (out / "annotator_B.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert tuple(reader.fieldnames or ()) == SHEET_COLUMNS
    assert [r["label"] for r in rows] == ["", "", ""]
    assert all(r["citing_claims"].startswith("1. ") and r["cited_claims"] for r in rows)
    # The key holds the view's decisions, by item.
    key = json.loads((out / "key.json").read_text())
    view = {(e["citing"], e["cited"]): e for e in
            evidence_graph(graph, finished_run["id"], None)["edges"]}
    for item in key["items"].values():
        edge = view[(item["citing"], item["cited"])]
        assert item["decision"] == ("retain" if edge["retained"] else "prune")
        assert item["reason"] == edge["reason"]
    assert [i["item_id"] for i in result.items] == sorted(key["items"])
    record = read_run_record(graph, result.run_id)
    assert record is not None and (record["kind"], record["status"]) == ("validation_export",
                                                                        "done")
    # The same seed draws the same sample.
    again = export_validation_sample(graph, source, SampleRequest(3, 2 / 3, ("A", "B", "C"),
                                                                  7), tmp_path / "again")
    assert again.items == result.items


def test_labels_are_imported_and_the_measures_reported(
        graph: Graph, finished_run: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "export"
    export_validation_sample(graph, source_of(graph, finished_run),
                             SampleRequest(3, 2 / 3, ("A", "B", "C"), 1), out)
    key = json.loads((out / "key.json").read_text())["items"]
    items = sorted(key)
    truth = {item: key[item]["decision"] for item in items}
    r0, r1 = [i for i in items if truth[i] == "retain"]
    (p0,) = [i for i in items if truth[i] == "prune"]
    # A agrees with Crase everywhere; B flips r0; C flips r0 and p0. Majorities: r0 prune
    # (B and C), r1 retain, p0 prune (A and B).
    a = dict(truth)
    b = {**truth, r0: "prune"}
    c = {**truth, r0: "prune", p0: "retain"}
    fill_csv(out / "annotator_A.csv", a)
    fill_csv(out / "annotator_B.csv", b)
    sheet = json.loads((out / "annotator_C.json").read_text())
    for entry in sheet["items"]:
        entry["label"] = c[entry["item_id"]].upper()  # labels are read case-insensitively
    (out / "annotator_C.json").write_text(json.dumps(sheet))
    imported = import_labels(graph, out, [out / "annotator_A.csv", out / "annotator_B.csv",
                                          out / "annotator_C.json"])
    assert imported["annotators"] == ["A", "B", "C"]
    report = report_validation(graph, out)
    m = report["measures"]
    # Agreement: r1 and p0 of 3. Retained r0, r1: only r1, 1/2; pruned p0: 1/1.
    assert m["crase_majority_agreement"] == pytest.approx(2 / 3)
    assert m["retained_edge_precision"] == 0.5
    assert m["pruned_edge_correctness"] == 1.0
    # Unanimous: only r1, 1/3.
    assert m["unanimous_agreement"] == pytest.approx(1 / 3)
    # Kappa by hand, counts (retain, prune): r0 (1, 2), r1 (3, 0), p0 (1, 2).
    # P_i = (1 + 4 - 3)/6 = 1/3, (9 - 3)/6 = 1, 1/3 -> P_bar = 5/9; p_retain = 5/9,
    # p_prune = 4/9 -> P_e = 41/81; kappa = (45/81 - 41/81) / (40/81) = 1/10.
    assert m["fleiss_kappa"] == pytest.approx(0.1, abs=1e-12)
    text = (out / "report.md").read_text()
    assert "| Crase-majority agreement | 66.7% |" in text
    assert "| Fleiss' kappa | 0.10 |" in text
    record = read_run_record(graph, report["run_id"])
    assert record is not None and record["kind"] == "validation_report"
    assert record["counts"]["fleiss_kappa"] == pytest.approx(0.1)


def test_bad_sheets_and_impossible_samples_are_named_errors(
        graph: Graph, finished_run: dict[str, Any], tmp_path: Path) -> None:  # noqa: F811
    source = source_of(graph, finished_run)
    out = tmp_path / "export"
    export_validation_sample(graph, source, SampleRequest(2, 0.5, ("A", "B"), 0), out)
    items = sorted(json.loads((out / "key.json").read_text())["items"])
    fill_csv(out / "annotator_A.csv", {items[0]: "retain", items[1]: ""})
    with pytest.raises(EdgeValidationError, match=f"left 1 items without a label \\({items[1]}"):
        import_labels(graph, out, [out / "annotator_A.csv"])
    fill_csv(out / "annotator_A.csv", {items[0]: "retain", items[1]: "maybe"})
    with pytest.raises(EdgeValidationError, match="other than retain or prune"):
        import_labels(graph, out, [out / "annotator_A.csv"])
    fill_csv(out / "annotator_A.csv", {items[0]: "retain", items[1]: "prune"})
    import_labels(graph, out, [out / "annotator_A.csv"])
    with pytest.raises(EdgeValidationError, match="agreement needs at least two"):
        report_validation(graph, out)
    with pytest.raises(EdgeValidationError, match="already holds an export"):
        export_validation_sample(graph, source, SampleRequest(2, 0.5, ("A", "B"), 0), out)
    with pytest.raises(EdgeValidationError, match="ask for fewer edges"):
        export_validation_sample(graph, source, SampleRequest(10_000, 0.5, ("A", "B"), 0),
                                 tmp_path / "big")
    with pytest.raises(EdgeValidationError, match="at least two annotators"):
        export_validation_sample(graph, source, SampleRequest(2, 0.5, ("A",), 0),
                                 tmp_path / "one")
    with pytest.raises(EdgeValidationError, match="is missing"):
        import_labels(graph, tmp_path / "nothing", [out / "annotator_A.csv"])


def test_the_sample_takes_exactly_the_stated_shares() -> None:
    edges = [JudgedEdge(f"u{i}", f"v{i}", 0.9 if i < 30 else 0.0,
                        "retain" if i < 30 else "prune", "") for i in range(50)]
    sample = sample_edges(edges, SampleRequest(20, 0.25, ("A", "B"), 3))
    assert sum(1 for e in sample if e.decision == "retain") == 5
    assert sum(1 for e in sample if e.decision == "prune") == 15
    assert len({(e.citing, e.cited) for e in sample}) == 20
    with pytest.raises(EdgeValidationError, match="the source has 30 retained and 20 pruned"):
        sample_edges(edges, SampleRequest(40, 0.0, ("A", "B"), 3))


def test_the_corpus_source_judges_every_edge_its_scorer_scored(
        graph: Graph, finished_run: dict[str, Any], settings: Settings) -> None:  # noqa: F811
    view = evidence_graph(graph, finished_run["id"], None)
    source = corpus_source(graph, view["theta"], view["tau"])
    assert source.kind == "corpus" and source.scorer == view["scorer"]
    scored = {(e["citing"], e["cited"]): e for e in view["edges"] if e["delta"] is not None}
    judged = {(e.citing, e.cited): e for e in source.edges}
    assert set(scored) <= set(judged)
    for edge, seen in scored.items():
        assert judged[edge].delta == pytest.approx(seen["delta"])
        assert (judged[edge].delta > view["tau"]) == (judged[edge].decision == "retain")
    with pytest.raises(EdgeValidationError, match="no edge is scored by nobody@0"):
        corpus_source(graph, 0.4, 0.2, scorer="nobody@0")


def test_the_command_line(graph: Graph, finished_run: dict[str, Any], cli_env: Path,  # noqa: F811
                          capsys: pytest.CaptureFixture[str]) -> None:
    out = cli_env / "sample"
    assert main(["validate", "export", "--run", finished_run["id"], "--edges", "2",
                 "--annotators", "A", "B", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 edges (1 retained, 1 pruned)" in printed and "keep key.json away" in printed
    key = json.loads((out / "key.json").read_text())["items"]
    fill_csv(out / "annotator_A.csv", {i: e["decision"] for i, e in key.items()})
    fill_csv(out / "annotator_B.csv", {i: flipped(e["decision"]) for i, e in key.items()})
    assert main(["validate", "import", str(out), str(out / "annotator_A.csv"),
                 str(out / "annotator_B.csv")]) == 0
    assert "imported A, B" in capsys.readouterr().out
    assert main(["validate", "report", str(out)]) == 0
    report = capsys.readouterr().out
    # Two annotators who disagree everywhere: no item has a majority.
    assert "| Crase-majority agreement | n/a |" in report
    assert "| Unanimous agreement | 0.0% |" in report
    assert main(["validate", "export", "--corpus", "--tau", "0.2", "--edges", "2", "--out",
                 str(cli_env / "corpus")]) == 0
    capsys.readouterr()
    assert main(["validate", "export", "--edges", "2"]) == 2
    assert "one of the arguments --run --corpus is required" in capsys.readouterr().err
    assert main(["validate", "export", "--run", finished_run["id"], "--tau", "0.5"]) == 2
    assert "--tau go with --corpus" in capsys.readouterr().err


def test_the_http_routes_keep_the_key_on_the_server(
        client: TestClient, finished_run: dict[str, Any],  # noqa: F811
        api_settings: Settings) -> None:  # noqa: F811
    response = client.post("/validation/exports", json={
        "source": "run", "run_id": finished_run["id"], "edges": 2, "annotators": ["A", "B"]})
    assert response.status_code == 201, response.text
    export = response.json()
    assert not keys_in(export["items"]) & HIDDEN
    assert export["counts"]["sampled"] == 2
    key_file = api_settings.var_dir / "validation" / export["run_id"] / "key.json"
    key = json.loads(key_file.read_text())["items"]
    for name, labels in [("A", {i: e["decision"] for i, e in key.items()}),
                         ("B", {i: e["decision"] for i, e in key.items()})]:
        answer = client.post(export["labels_url"], json={"annotator": name, "labels": labels})
        assert answer.status_code == 200, answer.text
    report = client.post(export["report_url"])
    assert report.status_code == 200, report.text
    measures = report.json()["measures"]
    assert measures["crase_majority_agreement"] == 1.0 and measures["unanimous_agreement"] == 1.0
    bad = client.post(export["labels_url"], json={"annotator": "C", "labels": {}})
    assert bad.status_code == 422 and "without a label" in bad.json()["detail"]
    assert client.post("/validation/../report").status_code in (404, 405)
    assert client.post("/validation/000000000000/report").status_code == 404
    assert client.post(export["report_url"],
                       headers={"X-API-Key": "not-a-key"}).status_code == 401
    paths = client.get("/schema/openapi.json").json()["paths"]
    assert {"/validation/exports", "/validation/{export_id}/labels",
            "/validation/{export_id}/report"} <= set(paths)
