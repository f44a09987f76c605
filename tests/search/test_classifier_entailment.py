"""The claim-pair classifier as the search's entailment backend, against the real database:
a real coverage-weighted search stores one matrix per scored edge under the classifier's
name and version, the cosine scorer's matrices are never read as its own, and `crase score`
backfills the corpus with it, and the human-validation export and report read its edges."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from crase.api.cli import main
from crase.graph import Graph
from crase.research.edge_validation import SHEET_COLUMNS
from crase.search.grounding import read_claims
from crase.search.pipeline import run_search
from crase.search.request import SearchRequest
from crase.search.roles.classifier_entailment import SCORER_NAME, ClassifierEntailmentScorer
from crase.search.roles.from_settings import build_search_backends
from crase.search.roles.protocols import SearchBackends
from crase.settings import ModelSettings, SearchSettings, Settings
from tests.sample_slice import load_sample_slice

pytestmark = pytest.mark.integration

COVERAGE = {"weighting": "coverage", "k": 20}


@pytest.fixture(scope="module")
def classifier() -> SearchBackends:
    return build_search_backends(Settings(models=ModelSettings(entailment_scorer="classifier")))


def stored_edges(graph: Graph) -> list[dict]:
    with graph.driver.session() as session:
        return session.run(
            "MATCH (u:Paper)-[r:CITES]->(v:Paper) WHERE r.scorer IS NOT NULL "
            "RETURN u.id AS citing, v.id AS cited, r.scorer AS scorer, "
            "r.scorer_version AS version, r.matrix AS matrix, r.matrix_rows AS rows, "
            "r.matrix_cols AS cols, r.delta AS delta, r.theta AS theta").data()


def test_a_search_stores_the_classifier_s_matrix_on_every_edge(
        graph: Graph, classifier: SearchBackends) -> None:
    rows = load_sample_slice(graph, 300)
    cosine = build_search_backends(Settings())
    request = SearchRequest(query=rows[0]["title"], params=SearchSettings(**COVERAGE))
    before = run_search(graph, cosine, request)
    assert before.counts["edges_scored_now"] > 0

    result = run_search(graph, classifier, request)
    scorer = classifier.scorer
    assert result.backends["entailment"] == f"{SCORER_NAME}@{scorer.version}"
    # Every edge the cosine scorer stored is scored again: its matrices are not this one's.
    assert result.counts["edges_reused"] == 0
    assert result.counts["edges_scored_now"] == before.counts["edges_scored_now"]
    edges = stored_edges(graph)
    assert len(edges) == result.counts["edges_scored_now"]
    assert {(e["scorer"], e["version"]) for e in edges} == {(SCORER_NAME, scorer.version)}
    claims = read_claims(graph, sorted({p for e in edges for p in (e["citing"], e["cited"])}),
                         classifier.extractor.name)
    matrices = scorer.score([(claims[e["citing"]], claims[e["cited"]]) for e in edges])
    for edge, matrix in zip(edges, matrices, strict=True):
        assert matrix is not None and matrix.shape == (edge["rows"], edge["cols"])
        assert len(edge["matrix"]) == edge["rows"] * edge["cols"]
        assert np.allclose(edge["matrix"], matrix.ravel(), atol=1e-6)
        assert 0 <= min(edge["matrix"]) and max(edge["matrix"]) <= 1

    again = run_search(graph, classifier, request)
    assert again.counts["edges_scored_now"] == 0
    assert again.counts["edges_reused"] == len(edges)


def test_crase_score_backfills_the_corpus_with_the_classifier(
        graph: Graph, cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    load_sample_slice(graph, 120)
    with graph.driver.session() as session:
        edges = session.run("MATCH ()-[r:CITES]->() RETURN count(r) AS n").single()["n"]
    assert edges > 0
    assert main(["score", "--entailment-scorer", "classifier", "--batch-size", "50"]) == 0
    assert f"scored {edges} of {edges} unscored edges" in capsys.readouterr().out
    stored = stored_edges(graph)
    assert len(stored) == edges
    assert {e["scorer"] for e in stored} == {SCORER_NAME}
    assert all(e["rows"] * e["cols"] == len(e["matrix"]) for e in stored)
    assert main(["score", "--entailment-scorer", "classifier"]) == 0
    assert "scored 0 of 0 unscored edges" in capsys.readouterr().out

    # The human-validation export, import and report of the classifier's corpus.
    scorer = f"{SCORER_NAME}@{stored[0]['version']}"
    threshold = str(ClassifierEntailmentScorer().threshold)
    out = cli_env / "validation"
    assert main(["validate", "export", "--corpus", "--scorer", scorer, "--theta", threshold,
                 "--tau", "0.5", "--edges", "4", "--annotators", "A", "B",
                 "--out", str(out)]) == 0
    assert "4 edges" in capsys.readouterr().out
    key = json.loads((out / "key.json").read_text())
    assert key["source"]["scorer"] == scorer
    for annotator in ("A", "B"):
        sheet = out / f"annotator_{annotator}.csv"
        with sheet.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            row["label"] = key["items"][row["item_id"]]["decision"]
        with sheet.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=SHEET_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    assert main(["validate", "import", str(out), str(out / "annotator_A.csv"),
                 str(out / "annotator_B.csv")]) == 0
    assert main(["validate", "report", str(out)]) == 0
    assert "| Unanimous agreement | 100.0% |" in capsys.readouterr().out
