"""`crase load` from the command line: progress on stderr, a summary, a fast second run."""

from pathlib import Path

import pytest

from crase.api.cli import main
from crase.bench.generate import generate
from crase.graph import Graph

pytestmark = pytest.mark.integration


def test_load_command(graph: Graph, cli_env: Path, tmp_path: Path,
                      capsys: pytest.CaptureFixture[str]) -> None:
    generate(tmp_path / "corpus", papers=200, edges=1500, seed=5)
    with (tmp_path / "corpus" / "citations.csv").open("a") as edges:
        edges.write("gen0000001,gen0000001\n")

    assert main(["load", str(tmp_path / "corpus"), "--batch-size", "400"]) == 0
    out, err = capsys.readouterr()
    assert "papers" in err and "citations" in err and "rows" in err and "/s" in err
    assert "200 loaded" in out and "1,500 loaded" in out and "self_citation" in out
    rejects = next((tmp_path / "var" / "loads").glob("corpus-*.rejects.jsonl"))
    assert str(rejects) in out

    assert main(["load", str(tmp_path / "corpus")]) == 0
    assert "unchanged since its last load" in capsys.readouterr().out

    assert main(["load", str(tmp_path / "missing")]) == 2
    assert "CorpusError" in capsys.readouterr().err
