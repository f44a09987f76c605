"""The notebook example is a valid nbformat-4 notebook, committed executed (its outputs
saved, none an error), whose code runs against the test database and calls run_idea."""

import json
from pathlib import Path
from typing import Any

import pytest

from crase.graph import Graph
from crase.settings import DatabaseSettings

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "idea_example.ipynb"


def load_notebook() -> dict[str, Any]:
    notebook: dict[str, Any] = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return notebook


def code_cells() -> list[str]:
    return ["".join(cell["source"]) for cell in load_notebook()["cells"]
            if cell["cell_type"] == "code"]


def test_the_notebook_is_valid_nbformat_4() -> None:
    notebook = load_notebook()
    assert notebook["nbformat"] == 4 and notebook["nbformat_minor"] >= 4
    ids = [cell["id"] for cell in notebook["cells"]]
    assert len(ids) == len(set(ids))
    for cell in notebook["cells"]:
        assert cell["cell_type"] in ("markdown", "code")
        assert isinstance(cell["source"], list) and isinstance(cell["metadata"], dict)
    for source in code_cells():
        compile(source, "cell", "exec")
    assert any("run_idea(" in source for source in code_cells())


def test_the_notebook_is_committed_with_its_outputs() -> None:
    cells = [c for c in load_notebook()["cells"] if c["cell_type"] == "code"]
    counts = [cell["execution_count"] for cell in cells]
    assert counts == list(range(1, len(cells) + 1))  # run once, top to bottom
    outputs = [output for cell in cells for output in cell["outputs"]]
    assert outputs and not [o for o in outputs if o["output_type"] == "error"]
    text = "".join("".join(o.get("text", [])) for o in outputs)
    # the sample's five works and the summary of the audit
    assert "Where candidates were lost:" in text and "5. [" in text


@pytest.mark.integration
def test_the_notebook_runs(corpus: Graph, monkeypatch: pytest.MonkeyPatch,
                           database_settings: DatabaseSettings, tmp_path: Path) -> None:
    monkeypatch.setenv("CRASE_DATABASE__URI", database_settings.bolt_uri())
    monkeypatch.setenv("CRASE_DATABASE__PASSWORD", database_settings.password or "")
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    namespace: dict[str, Any] = {}
    for source in code_cells():
        exec(compile(source, str(NOTEBOOK), "exec"), namespace)  # noqa: S102 - our own file
    result = namespace["result"]  # the fixture corpus has no morphology papers: few works
    shortlist = result.counts["shortlist"]
    assert [p.rank for p in result.papers] == list(range(1, min(5, shortlist) + 1))
    assert namespace["audit"]["run_id"] == result.run_id
