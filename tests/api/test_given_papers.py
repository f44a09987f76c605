"""A search that starts from papers, on every surface, against a real Neo4j: the entries
resolved (graph ids, arXiv ids and DOIs in any spelling, exact titles; the rest listed),
reference files (BibTeX, RIS, and a run's own exports) read into seeds, `crase search
--from/--from-file` end to end, and `POST /searches` with `given_papers` (the given papers
never among the results, each result's evidence naming the given paper it connects to,
unknown entries a 422 that lists them all).

The API tests' fixture corpus (tests/api/corpus.py) with two DOIs added is loaded once for
the module, and one app serves every HTTP test of it; the tests add runs and nothing else.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from crase.api.app import create_app
from crase.api.batch_loads import load_batch
from crase.api.cli import main
from crase.graph import Graph
from crase.reference_lists import reference_file_entries
from crase.search.given_papers import resolve_given, typed_entries
from crase.settings import DatabaseSettings, Settings
from tests.api.conftest import API_KEY, api_settings_for, wait_for_run
from tests.api.corpus import UNRELATED, fixture_corpus
from tests.conftest import clean_graph

pytestmark = pytest.mark.integration

# Two papers of the fixture corpus get a DOI (as a publisher writes it: upper case).
DOIS = {"holography-05": "10.1000/HOLO.5", "tachyon-08": "10.1000/TACH.8"}
ARXIV_OF = {"holography-04": "hep-th/9400410"}  # what fixture_corpus gives it
EXACT_TITLE = "Black hole entropy from string microstates, part 3"  # entropy-02
# Words of twelve titles ("..., part N"): no single paper is meant, so none is guessed.
UNSURE_TITLE = "Black hole entropy from string microstates"
UNKNOWN = ["10.9999/nobody.wrote.this", "arXiv:2999.99999", UNSURE_TITLE,
           "Sourdough fermentation in outer space"]
SEARCH_PARAMS = {"k": 8, "weighting": "uniform"}


# A second paper with the title of the corpus's unrelated one: a title two papers share
# names neither.
TWIN = {**UNRELATED, "id": "unrelated-01", "year": 2004}


def given_corpus() -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    papers, citations = fixture_corpus()
    papers = [{**paper, "doi": DOIS[paper["id"]]} if paper["id"] in DOIS else paper
              for paper in papers]
    return [*papers, TWIN], [(c["citing_id"], c["cited_id"]) for c in citations]


@pytest.fixture(scope="module")
def loaded(database_settings: DatabaseSettings, session_graph: Graph,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Graph, Settings]]:
    """The corpus with DOIs, loaded by the loader once for the module."""
    settings = api_settings_for(Settings(
        database=database_settings, var_dir=tmp_path_factory.mktemp("given") / "var"))
    clean_graph(session_graph)
    outcome = load_batch(session_graph, settings, *given_corpus())
    assert not outcome.rejects, outcome.rejects
    yield session_graph, settings
    clean_graph(session_graph)


@pytest.fixture(scope="module")
def api(loaded: tuple[Graph, Settings]) -> Iterator[TestClient]:
    graph, settings = loaded
    with TestClient(create_app(settings, graph=graph)) as test_client:
        test_client.headers["X-API-Key"] = API_KEY
        yield test_client


@pytest.fixture(scope="module")
def from_papers_run(api: TestClient) -> dict[str, Any]:
    """A search from three papers named three ways, no query, run to the end."""
    response = api.post("/searches", json={
        "given_papers": ["arXiv:hep-th/9400410v2", "https://doi.org/10.1000/holo.5",
                     "tachyon-02"],
        "params": SEARCH_PARAMS})
    assert response.status_code == 202, response.text
    run = wait_for_run(api, response.json()["run_id"])
    assert run["status"] == "done", run
    return run


def test_entries_resolve_by_id_arxiv_doi_and_exact_title_and_the_rest_are_listed(
        loaded: tuple[Graph, Settings]) -> None:
    graph, _ = loaded
    entries = typed_entries([
        "tachyon-03", "https://arxiv.org/abs/hep-th/9400410v3", "doi:10.1000/holo.5",
        "10.1000/TACH.8", f"  {EXACT_TITLE.lower()} ", "tachyon-03", *UNKNOWN,
        UNRELATED["title"]])
    given = resolve_given(graph, entries)

    assert given.ids == ["tachyon-03", "holography-04", "holography-05", "tachyon-08",
                         "entropy-02"]  # in the order given, each once
    assert [p.matched_by for p in given.found] == ["id", "arxiv_id", "doi", "doi", "title",
                                                   "id"]
    assert given.unknown == [*UNKNOWN, UNRELATED["title"]]


def test_bibtex_and_ris_files_become_seeds_with_unknown_entries_listed(
        loaded: tuple[Graph, Settings]) -> None:
    graph, _ = loaded
    bibtex = ("@article{a, title = {Whatever}, doi = {10.1000/Holo.5}}\n"
              "@misc{b, title = {Another}, eprint = {hep-th/9400410}, archivePrefix = {arXiv}}\n"
              f"@misc{{c, title = {{{EXACT_TITLE}}}}}\n"
              "@misc{d, title = {A paper this corpus lacks}, doi = {10.9999/lacking}}\n"
              "@misc{e, publisher = {Nobody}}\n")
    ris = ("TY  - JOUR\r\nID  - x\r\nDO  - 10.1000/TACH.8\r\nER  - \r\n"
           "TY  - UNPB\r\nUR  - https://arxiv.org/abs/hep-th/9400410\r\nER  - \r\n"
           "TY  - GEN\r\nTI  - Nothing like it in the graph\r\nER  - \r\n")
    from_bibtex = resolve_given(graph, reference_file_entries(bibtex, "library.bib"))
    from_ris = resolve_given(graph, reference_file_entries(ris, "library.ris"))

    assert from_bibtex.ids == ["holography-05", "holography-04", "entropy-02"]
    assert from_bibtex.unknown == ["d (10.9999/lacking)",
                                   "e (names no DOI, arXiv id or title)"]
    assert from_ris.ids == ["tachyon-08", "holography-04"]
    assert from_ris.unknown == ["record 3 (line 8) (Nothing like it in the graph)"]


def test_a_search_from_papers_over_http_names_the_given_paper_of_each_result(
        from_papers_run: dict[str, Any]) -> None:
    run = from_papers_run
    given = ["holography-04", "holography-05", "tachyon-02"]
    assert run["params"]["given_papers"] == given and run["query"] == ""
    assert [(p["id"], bool(p["title"])) for p in run["given_papers"]] == [
        (paper, True) for paper in given]
    assert [s["paper_id"] for s in run["seeds"]] == given
    results = run["results"]
    assert len(results) == 8 and not {r["id"] for r in results} & set(given)
    reached = [r["evidence"]["reached_from"] for r in results
               if not r["evidence"]["text_match"]]
    assert reached and set(reached) <= set(given)


def test_unknown_entries_are_a_422_listing_every_one_and_no_run_starts(
        api: TestClient, from_papers_run: dict[str, Any]) -> None:
    runs_before = api.get("/runs").json()["total"]
    response = api.post("/searches", json={"query": "tachyon condensation",
                                           "given_papers": ["tachyon-02", *UNKNOWN]})
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "GivenPapersUnknown" and body["unknown"] == UNKNOWN
    assert body["detail"].startswith("4 of the 5 papers to start from are not in the graph "
                                     "(looked for by id, DOI, arXiv id and title): "
                                     f"\"{UNKNOWN[0]}\", \"{UNKNOWN[1]}\"")
    assert "\n" not in body["detail"]
    assert api.get("/runs").json()["total"] == runs_before
    # Neither a query nor papers: nothing to search for.
    empty = api.post("/searches", json={"query": " ", "given_papers": []})
    assert empty.status_code == 400 and "given_papers" in empty.json()["detail"]
    blank = api.post("/searches", json={"given_papers": [" "]})
    assert blank.status_code == 400 and "given_papers.0" in blank.json()["detail"]


def test_the_schema_describes_given_papers(api: TestClient) -> None:
    schema = api.get("/schema/openapi.json").json()
    body = schema["components"]["schemas"]["SearchBody"]
    assert "DOI" in body["properties"]["given_papers"]["description"]
    assert "query" not in body.get("required", [])
    refused = schema["paths"]["/searches"]["post"]["responses"]["422"]
    assert "GivenPapersUnknown" in refused["description"]


@pytest.mark.parametrize("export_format", ["bibtex", "ris"])
def test_a_runs_export_imports_back_to_its_results(
        api: TestClient, loaded: tuple[Graph, Settings], from_papers_run: dict[str, Any],
        export_format: str) -> None:
    graph, _ = loaded
    response = api.get(f"/runs/{from_papers_run['id']}/export?format={export_format}")
    assert response.status_code == 200
    name = "run.bib" if export_format == "bibtex" else "run.ris"
    given = resolve_given(graph, reference_file_entries(response.text, name))
    assert given.unknown == []
    assert given.ids == [r["id"] for r in from_papers_run["results"]]


def test_the_command_line_starts_from_papers_and_files(
        loaded: tuple[Graph, Settings], cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    library = cli_env / "library.ris"
    library.write_text("TY  - JOUR\nDO  - 10.1000/TACH.8\nER  - \n", encoding="utf-8")
    code = main(["search", "--from", "holography-04", "--from", EXACT_TITLE,
                 "--from-file", str(library), "-k", "6", "--weighting", "uniform"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Starting from 3 given papers:" in out
    assert "Plan: none; the walk starts from the given papers" in out
    assert "[by title: Black hole entropy" in out and "[by doi:" in out
    rows = [line for line in out.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == 6
    assert not any(f" {paper} " in row for row in rows
                   for paper in ("holography-04", "entropy-02", "tachyon-08"))
    assert "from given paper \"" in out
    # The run read back names its given papers the same way.
    assert main(["show", out.split("Run ", 1)[1].split(":", 1)[0]]) == 0
    shown, _ = capsys.readouterr()
    assert "Plan: none; the walk starts from the given papers" in shown
    assert "from given paper \"" in shown


def test_the_command_lines_json_lists_the_given_papers(
        loaded: tuple[Graph, Settings], cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["search", "holographic duality", "--from", "arXiv:hep-th/9400410", "-k", "4",
                 "--weighting", "uniform", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)  # stdout holds the JSON alone
    assert result["given_papers"] == [{
        "entry": "arXiv:hep-th/9400410", "id": "holography-04", "matched_by": "arxiv_id",
        "title": "Holographic duality between gauge theory and anti-de Sitter gravity, part 5"}]
    assert [seed["paper_id"] for seed in result["seeds"]] == ["holography-04"]
    assert "holography-04" not in {paper["id"] for paper in result["results"]}


def test_the_command_line_lists_every_unknown_paper_and_stops(
        loaded: tuple[Graph, Settings], cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    library = cli_env / "library.bib"
    library.write_text("@misc{lost, title = {A paper this corpus lacks}}\n", encoding="utf-8")
    code = main(["search", "tachyons", "--from", "tachyon-02", "--from", UNKNOWN[0],
                 "--from", UNKNOWN[2], "--from-file", str(library)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert lines[:3] == [f"crase: not in the graph: {UNKNOWN[0]}",
                         f"crase: not in the graph: {UNKNOWN[2]}",
                         "crase: not in the graph: lost (A paper this corpus lacks)"]
    assert lines[3].startswith("crase: GivenPapersUnknown: 3 of the 4 papers")
    assert len(lines) == 4
