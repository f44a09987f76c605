"""The shared finished run exported over HTTP: JSON, CSV, BibTeX and RIS, each read back."""

import csv
import io
from typing import Any

import pytest
import rispy
from litestar.testing import TestClient

from tests.api.corpus import QUERY
from tests.api.test_exports import parsed_bibtex

pytestmark = pytest.mark.integration


def test_exports_in_four_formats(client: TestClient, finished_run: dict[str, Any]) -> None:
    run_id, results = finished_run["id"], finished_run["results"]
    as_json = client.get(f"/runs/{run_id}/export")
    assert as_json.headers["content-type"].startswith("application/json")
    assert [r["id"] for r in as_json.json()["results"]] == [r["id"] for r in results]
    assert as_json.json()["run"]["query"] == QUERY

    as_csv = client.get(f"/runs/{run_id}/export", params={"format": "csv"})
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert f"crase-run-{run_id}.csv" in as_csv.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [row["id"] for row in rows] == [r["id"] for r in results]
    assert rows[0]["authors"] == "; ".join(results[0]["authors"])

    bibtex = client.get(f"/runs/{run_id}/export", params={"format": "bibtex"}).text
    assert bibtex.count("@misc{") == len(results)
    assert f"eprint = {{{results[0]['arxiv_id']}}}" in bibtex
    assert f"Crase run {run_id}, rank 1," in bibtex

    ris = client.get(f"/runs/{run_id}/export", params={"format": "ris"}).text
    assert ris.count("TY  - ") == ris.count("ER  - ") == len(results)
    assert f"TI  - {results[0]['title']}\r\n" in ris

    bad = client.get(f"/runs/{run_id}/export", params={"format": "docx"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "format"


def test_a_finished_run_exports_with_links_and_one_charset(
        client: TestClient, finished_run: dict[str, Any]) -> None:
    run_id, results = finished_run["id"], finished_run["results"]
    assert results[0]["links"] == {"arxiv": f"https://arxiv.org/abs/{results[0]['arxiv_id']}"}
    as_csv = client.get(f"/runs/{run_id}/export", params={"format": "csv"})
    assert as_csv.headers["content-type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert rows[0]["url"] == results[0]["links"]["arxiv"]
    bibtex = client.get(f"/runs/{run_id}/export", params={"format": "bibtex"})
    assert bibtex.headers["content-type"].count("charset") == 1
    entries = parsed_bibtex(bibtex.text)
    assert len(entries) == len(results)
    # A paper without an identifier has no link, and its entry no url.
    assert sorted(entry.get("url", "") for entry in entries.values()) == sorted(
        r["links"].get("arxiv", "") for r in results)
    ris = client.get(f"/runs/{run_id}/export", params={"format": "ris"})
    assert ris.headers["content-type"].count("charset") == 1
    records = rispy.loads(ris.text)
    assert [r["id"] for r in records] == [r["id"] for r in results]
    assert [record.get("urls", []) for record in records] == [
        list(r["links"].values()) for r in results]
    exported = client.get(f"/runs/{run_id}/export").json()["results"]
    assert exported[0]["links"] == results[0]["links"]
