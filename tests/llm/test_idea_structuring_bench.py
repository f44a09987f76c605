"""The idea prompts' bench over the scripted server: recall alone, a repeated title repaired."""

import json
from pathlib import Path

import pytest

from crase.bench import idea_structuring
from tests.llm.chat_server import ChatServer, Reply


def paper(title: str) -> dict[str, object]:
    return {"title": title, "venue": None, "year": None, "doi": None, "arxiv_id": None,
            "url": None}


def test_recall_alone_is_asked_and_a_repeated_title_repaired(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "query": "sparse attention kernels",
                                   "relevant_ids": []}) + "\n", encoding="utf-8")
    monkeypatch.setenv("CRASE_MODELS__EXPERT__BASE_URL", chat_server.base_url)
    monkeypatch.setenv("CRASE_MODELS__EXPERT__MODEL", "test/expert")
    chat_server.script(Reply(json.dumps({"papers": [paper("Sparse Kernels")] * 3})),
                       Reply(json.dumps({"papers": [paper("Sparse Kernels")]})))

    assert idea_structuring.main(["--queries", str(queries), "--parts", "recall"]) == 0
    table = capsys.readouterr().out
    assert [line.split()[:5] for line in table.splitlines()
            if line.startswith("idea_recall_papers")] == [
        ["idea_recall_papers@1", "1", "0", "1", "0"]]
    repair = chat_server.requests[1]["messages"][-1]["content"]
    assert "appears 3 times" in repair and "keep one copy of each repeated paper" in repair


def test_a_part_without_its_model_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("CRASE_MODELS__EXPERT__BASE_URL", raising=False)
    monkeypatch.delenv("CRASE_MODELS__EXPERT__MODEL", raising=False)
    assert idea_structuring.main(["--queries", str(tmp_path / "q.jsonl"),
                                  "--parts", "recall"]) == 2
    assert "no expert model configured" in capsys.readouterr().err
