"""The code extractor on documents made here: a PDF written with PyMuPDF (a page with a
Python listing and an "Algorithm 1" block), Markdown with fences; execution only on
request, in a subprocess stopped at its timeout; the model path against a local server
that speaks the OpenAI chat-completions shape."""

import base64
import json
import sys
import time
from pathlib import Path

import pymupdf
import pytest
from litestar.testing import TestClient

from crase.api.cli import main
from crase.api.run_views import read_run_record
from crase.errors import DocumentUnreadable
from crase.graph import Graph
from crase.models.chat import ModelRunner
from crase.research.code_extractor import (
    CodeBlock,
    Document,
    ModelAnalyst,
    dependencies,
    diagnose,
    execute_block,
    extract_blocks,
    extract_code,
    read_document,
    report_markdown,
)
from crase.settings import ModelEndpoint
from tests.api.conftest import api_settings, client  # noqa: F401  (fixtures)
from tests.llm.chat_server import ChatServer, Reply

pytestmark = pytest.mark.integration

PAPER_LINES = [
    "1 Introduction",
    "We train a two-layer MLP with a hidden size of 256, optimized with Adam.",
    "The learning rate is 0.001 and the batch size is 32; we report accuracy on the test set.",
    "",
    "Algorithm 1 Gradient descent on the training loss",
    "Input: data D, learning rate eta, steps T",
    "Output: parameters w",
    "1: initialize w <- 0",
    "2: for t = 1 to T do",
    "3:   w <- w - eta * grad L(w; D)",
    "4: end for",
    "5: return w",
    "2 Method",
    "Our implementation is listed below.",
    "import math",
    "def step(w, lr):",
    "    return w - lr * math.sqrt(w)",
    "weights = step(4.0, 0.5)",
    "print(weights)",
    "3 Results",
    "The model reaches 91% accuracy.",
]
MARKDOWN = """# A method

We tokenize the input and train for 10 epochs.

```python
import torch
for epoch in range(10):
    loss = model(batch)
    loss.backward()
    optimizer.step()
```

```pseudocode
Input: a graph G
for each node v in G do
    update v
end for
Output: the updated graph
```
"""


def write_pdf(path: Path, lines: list[str]) -> Path:
    document = pymupdf.open()
    page = document.new_page()
    for number, line in enumerate(lines):
        page.insert_text((60, 60 + 14 * number), line, fontsize=10,
                         fontname="cour" if line.startswith(("import", "def", "    ", "weights",
                                                             "print")) else "helv")
    document.save(path)
    return path


@pytest.fixture
def paper_pdf(tmp_path: Path) -> Path:
    return write_pdf(tmp_path / "paper.pdf", PAPER_LINES)


def test_the_pdf_gives_its_code_block_and_its_algorithm(paper_pdf: Path) -> None:
    document = read_document(paper_pdf)
    assert document.kind == "pdf"
    blocks = extract_blocks(document)
    assert [(b.kind, b.rule) for b in blocks] == [("pseudocode", "Algorithm heading"),
                                                  ("code", "code-like lines")]
    algorithm, code = blocks
    assert algorithm.text.splitlines()[0] == "Algorithm 1 Gradient descent on the training loss"
    assert algorithm.text.splitlines()[-1] == "5: return w"
    assert algorithm.where == "page 1, lines 4-11"
    assert code.text.splitlines()[0] == "import math"
    assert code.text.splitlines()[-1] == "print(weights)"
    assert code.language == "python" and code.syntax == "ok"
    assert code.execution == {"status": "not run"}


def test_markdown_fences_and_the_diagnostics(graph: Graph, tmp_path: Path) -> None:
    path = tmp_path / "method.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    result = extract_code(graph, read_document(path))
    assert [(b.kind, b.language, b.rule) for b in result.blocks] == [
        ("code", "python", "fenced block"), ("pseudocode", None, "fenced block")]
    d = result.diagnostics
    assert [f["name"] for f in d["frameworks"]] == ["PyTorch"]
    assert d["dependencies"] == [{"name": "torch", "source": "import",
                                  "standard_library": False,
                                  "importable_here": d["dependencies"][0]["importable_here"]}]
    components = {name: c["status"] for name, c in d["components"].items()}
    # "train for 10 epochs" describes the training loop's length, a hyperparameter.
    assert components == {"training loop": "in code", "preprocessing": "described",
                          "hyperparameters": "described", "evaluation": "missing"}
    # Every score says it is a heuristic and which rule made it.
    assert {s["basis"] for s in result.scores.values()} == {"heuristic"}
    # (1 + 0.5 + 0.5 + 0) / 4; pseudocode has Input/Output and 5 lines -> 2; code present
    # but evaluation missing -> level 2.
    assert result.scores["implementation_completeness"]["value"] == 0.5
    assert result.scores["pseudocode_completeness"]["value"] == 2
    assert result.scores["reproducibility_level"]["value"] == 2
    assert any("No model endpoint" in note for note in result.notes)
    report = report_markdown(result)
    assert report.startswith("# Implementation diagnostics: method.md")
    assert "| evaluation | missing | - |" in report and "heuristic" in report
    record = read_run_record(graph, result.run_id)
    assert record is not None
    assert (record["kind"], record["status"]) == ("code_extract", "done")
    assert record["counts"]["code_blocks"] == 1 and record["counts"]["executed"] == 0
    assert record["backends"]["analysis"].startswith("heuristic")


def test_nothing_runs_without_the_flag(graph: Graph, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    path = tmp_path / "writes.md"
    path.write_text(f"```python\nopen({str(marker)!r}, 'w').write('x')\nx = 1\nprint(x)\n```\n",
                    encoding="utf-8")
    result = extract_code(graph, read_document(path))
    assert result.blocks[0].syntax == "ok"
    assert result.blocks[0].execution == {"status": "not run"}
    assert not marker.exists()
    ran = extract_code(graph, read_document(path), execute=True, timeout_s=20)
    assert ran.blocks[0].execution["status"] == "ok", ran.blocks[0].execution
    assert ran.blocks[0].execution["stdout"] == "1\n"
    assert marker.read_text() == "x"


def test_a_block_that_never_ends_is_stopped_at_the_timeout() -> None:
    block = CodeBlock("code", "python", "import time\nwhile True:\n    time.sleep(0.1)\n",
                      "lines 1-3", "fenced block", syntax="ok")
    started = time.monotonic()
    outcome = execute_block(block, timeout_s=1.0)
    assert outcome["status"] == "timed out"
    assert outcome["returncode"] is not None and outcome["returncode"] < 0  # killed
    assert time.monotonic() - started < 10


def test_a_block_that_fails_or_does_not_parse(tmp_path: Path) -> None:
    failing = CodeBlock("code", "python", "raise SystemExit(3)\n", "lines 1-1", "fenced block",
                        syntax="ok")
    assert execute_block(failing, 10.0)["returncode"] == 3
    broken = CodeBlock("code", "python", "def f(:\n", "lines 1-1", "fenced block",
                       syntax="error: invalid syntax (line 1)")
    assert execute_block(broken, 10.0)["status"] == "not run"


def test_unreadable_documents_are_named_errors(tmp_path: Path) -> None:
    with pytest.raises(DocumentUnreadable, match="reads .pdf, .md and .txt"):
        read_document(tmp_path / "paper.docx")
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(DocumentUnreadable, match="is empty"):
        read_document(empty)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(DocumentUnreadable, match="not UTF-8"):
        read_document(latin)
    fake = tmp_path / "fake.pdf"
    fake.write_text("not a pdf", encoding="utf-8")
    with pytest.raises(DocumentUnreadable, match="cannot open"):
        read_document(fake)


def test_the_command_line(cli_env: Path, paper_pdf: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    out = cli_env / "report.md"
    assert main(["code-extract", str(paper_pdf), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "execution: off" in captured.err
    report = out.read_text(encoding="utf-8")
    assert "### 1. pseudocode" in report and "### 2. code (python)" in report
    assert "Execution: not run." in report
    assert main(["code-extract", str(paper_pdf), "--execute", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["blocks"][1]["execution"]["stdout"] == "3.0\n"
    assert main(["code-extract", str(cli_env / "paper.odt")]) == 2
    assert "DocumentUnreadable" in capsys.readouterr().err


def test_the_http_route_reads_a_pdf_and_never_executes(client: TestClient,  # noqa: F811
                                                        paper_pdf: Path) -> None:
    body = {"filename": "paper.pdf",
            "pdf_base64": base64.b64encode(paper_pdf.read_bytes()).decode()}
    response = client.post("/code-extract", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert [b["kind"] for b in result["blocks"]] == ["pseudocode", "code"]
    assert all(b["execution"] == {"status": "not run"} for b in result["blocks"])
    assert result["report_markdown"].startswith("# Implementation diagnostics: paper.pdf")
    assert client.get(f"/runs/{result['run_id']}").json()["kind"] == "code_extract"
    markdown = client.post("/code-extract", json={"filename": "m.md", "text": MARKDOWN})
    assert markdown.json()["blocks"][0]["language"] == "python"
    both = client.post("/code-extract", json={"filename": "m.md", "text": "x",
                                              "pdf_base64": "eA=="})
    assert both.status_code == 400
    assert client.post("/code-extract", json={"filename": "m.pdf", "text": "x"}
                       ).status_code == 422
    assert "/code-extract" in client.get("/schema/openapi.json").json()["paths"]
    assert client.post("/code-extract", json=body,
                       headers={"X-API-Key": "not-a-key"}).status_code == 401


def test_the_model_path_labels_its_analysis(graph: Graph, tmp_path: Path) -> None:
    answer = {"frameworks": ["PyTorch"], "dependencies": [], "model_structure": ["MLP"],
              "missing_components": [{"component": "hyperparameters",
                                      "detail": "No learning rate is given."}],
              "pseudocode_completeness": 2, "reproducibility_level": 2,
              "notes": "The loop is shown; its settings are not."}
    path = tmp_path / "method.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    with ChatServer(lambda request: Reply(json.dumps(answer))).running() as server:
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/analyst", timeout_s=5.0)
        analyst = ModelAnalyst(endpoint, ModelRunner())
        result = extract_code(graph, read_document(path), analyst=analyst)
        sent = server.requests[0]["messages"][1]["content"]
    assert "<untrusted_data>" in sent and "loss.backward()" in sent
    analysis = result.model_analysis
    assert analysis is not None and analysis["status"] == "done"
    assert analysis["basis"] == "model test/analyst"
    assert analysis["missing_components"][0]["component"] == "hyperparameters"
    assert result.scores["reproducibility_level"]["basis"] == "heuristic"  # kept apart
    assert "## Model analysis (model test/analyst" in report_markdown(result)
    record = read_run_record(graph, result.run_id)
    assert record is not None and record["usage"]["expert"]["calls"] == 1


def test_a_failed_model_call_is_reported_not_replaced(graph: Graph, tmp_path: Path) -> None:
    path = tmp_path / "method.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    with ChatServer(lambda request: Reply("not json at all")).running() as server:
        endpoint = ModelEndpoint(base_url=server.base_url, model="test/analyst", timeout_s=5.0)
        result = extract_code(graph, read_document(path),
                              analyst=ModelAnalyst(endpoint, ModelRunner()))
    assert result.model_analysis is not None
    assert result.model_analysis["status"] == "failed"
    assert result.model_analysis["error"].startswith("invalid_reply")
    assert "The model analysis failed" in report_markdown(result)
    assert result.scores["pseudocode_completeness"]["value"] == 2


# --- hostile text ---------------------------------------------------------------------------

NAMED_MODULES = ("this", "venv", "venv.__main__")


@pytest.mark.parametrize("text", ["pip install this.x", "pip install venv.__main__.x",
                                  "```python\nimport this\nimport venv\nx = 1\n```"])
def test_a_dependency_named_in_the_text_is_never_imported(
        text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # Importing venv.__main__ runs venv's command line on sys.argv; give it nothing to make.
    monkeypatch.setattr(sys, "argv", ["crase"])
    for name in NAMED_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    document = Document("paper.md", "markdown", [text])
    rows = diagnose(document, extract_blocks(document))["dependencies"]
    assert [name for name in NAMED_MODULES if name in sys.modules] == []
    assert "Beautiful is better than ugly" not in capsys.readouterr().out
    assert rows and all(isinstance(row["importable_here"], bool) for row in rows)


def test_installed_is_answered_from_metadata_and_top_level_names() -> None:
    rows = {row["name"]: row for row in dependencies(
        "import numpy\nimport surely_not_installed_here\n",
        "pip install numpy pip install this.x pip install venv.__main__.x")}
    assert rows["numpy"]["importable_here"] is True
    assert rows["surely_not_installed_here"]["importable_here"] is False
    assert rows["this.x"]["importable_here"] is False
    assert rows["venv.__main__.x"]["importable_here"] is False


# Lines that made a backtracking pattern quadratic, each ~32,000 characters long.
HOSTILE_LINES = {
    "declaration without an end": "int " + "a" * 32_000 + ";b",
    "call without an end": "f(" + "a(" * 16_000 + "b",
    "assignment list": "a," * 16_000 + "b",
    "block header": "if " + ": x" * 10_000,
    "statement end": "a" + ")" * 32_000 + "b",
    "decorator": "@" + "a." * 16_000 + "(",
}


@pytest.mark.parametrize("line", list(HOSTILE_LINES.values()), ids=list(HOSTILE_LINES))
def test_a_hostile_line_is_read_in_linear_time(line: str) -> None:
    document = Document("paper.txt", "text", ["import os", line, line, "x = 1"])
    started = time.process_time()
    blocks = extract_blocks(document)
    diagnose(document, blocks)
    assert time.process_time() - started < 0.5


def test_blank_lines_inside_a_block_are_read_in_linear_time() -> None:
    # A `^\s*` at each line start ran over every blank line after it: quadratic.
    blank = " \n" * 100_000
    started = time.process_time()
    assert dependencies("x = 1\n" + blank + "y = 2\n", "") == []
    listing = Document("paper.txt", "text", ["#include <a>\n" + blank + "x = 1;\ny = 2;\n"])
    assert [block.language for block in extract_blocks(listing)] == [None]
    assert time.process_time() - started < 0.5


def test_a_block_the_python_parser_cannot_hold_is_reported_not_raised() -> None:
    deep = Document("paper.md", "markdown", ["```python\nx = " + "-" * 19_990 + "1\n```"])
    assert extract_blocks(deep)[0].syntax == "error: nested too deeply for the parser"
    long = Document("paper.md", "markdown", ["```python\n" + "x = f(1)\n" * 5_000 + "```"])
    started = time.process_time()
    assert extract_blocks(long)[0].syntax.startswith("not checked (longer than")
    assert time.process_time() - started < 0.5


def test_the_route_imports_nothing_a_document_names_and_reads_a_hostile_line(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(sys, "argv", ["crase"])
    for name in NAMED_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    for text in ("pip install this.x", "pip install venv.__main__.x"):
        response = client.post("/code-extract", json={"filename": "m.md", "text": text})
        assert response.status_code == 200, response.text
    assert [name for name in NAMED_MODULES if name in sys.modules] == []
    started = time.monotonic()
    hostile = client.post("/code-extract", json={
        "filename": "m.txt", "text": "x = 1\n" + HOSTILE_LINES["declaration without an end"]})
    assert hostile.status_code == 200, hostile.text
    assert time.monotonic() - started < 4  # 5.6 s before, on an idle host

