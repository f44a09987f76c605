"""`crase idea` and `crase idea-audit` against the test database."""

import json
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.graph import Graph
from tests.idea.corpus import IDEA

pytestmark = pytest.mark.integration


def test_crase_idea_prints_five_papers_and_writes_the_audit(
        corpus: Graph, cli_env: Path, pdf_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    audit_file = cli_env / "audit.json"
    code = main(["idea", IDEA, "--exclude", "src", "--no-providers", "--pdf-dir", str(pdf_dir),
                 "--audit-out", str(audit_file)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("\n1. [") == 1 and "\n5. [" in out
    assert "MATCH (r:Run {id: '" in out and "Audit: " in out
    audit = json.loads(audit_file.read_text())
    assert len(audit["final_ranking"]) == 5 and audit["outcome"] == "done"
    run_id = audit["run_id"]
    assert Path(cli_env / "var" / "runs" / run_id / "audit.json").is_file()

    assert main(["idea-audit", run_id]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported == audit


def test_crase_idea_json_mode(corpus: Graph, cli_env: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["idea", IDEA, "--json", "--no-providers", "--mode", "full_report"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["mode"] == "full_report" and "audit" not in result
    assert len(result["papers"]) == 5 and result["report"]["status"] == "written"
