"""SciNLI / MSciNLI pairs to score_entailment training examples: on small files in the data
sets' layout written here (the data sets themselves cannot be downloaded on this machine),
through the function, the command line and the HTTP API."""

import csv
import json
from pathlib import Path

import pytest
import yaml
from litestar.testing import TestClient

from crase.api.cli import main
from crase.api.run_views import read_run_record
from crase.errors import NliDataInvalid
from crase.graph import Graph
from crase.prompts.catalog import load_prompt
from crase.prompts.replies import EntailmentReply, check_entailment
from crase.research.entailment_data import (
    LABEL_SCORES,
    build_entailment_data,
    convert_files,
)
from crase.scoring.claims import Claim
from crase.search.roles.model import entailment_call
from tests.api.conftest import api_settings, client  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration

# SciNLI's CSV layout: id, sentence1 (premise), sentence2 (hypothesis), label.
SCINLI_ROWS = [
    ("s1", "The parser is trained on the Penn Treebank.",
     "The parser has seen newswire text during training.", "entailment"),
    ("s2", "The corpus contains only short sentences.",
     "Long-range dependencies are rare in our data.", "reasoning"),
    ("s3", "Prior systems rely on hand-written rules.",
     "Our model learns every rule from data.", "contrasting"),
    ("s4", "We release the annotation guidelines.",
     "Tokenization follows the Moses scripts.", "neutral"),
    ("s5", "", "A hypothesis without a premise.", "neutral"),
    ("s6", "Some premise.", "Some hypothesis.", "contradiction"),
]
# MSciNLI's JSON-lines layout, with its domain; line 3 is broken on purpose.
MSCINLI_LINES = [
    json.dumps({"id": "m1", "sentence1": "Transformers use self-attention.",
                "sentence2": "Self-attention relates every token to every other token.",
                "label": "entailment", "domain": "ACL"}),
    json.dumps({"id": "m2", "sentence1": "The network has few parameters.",
                "sentence2": "It trains quickly on one GPU.", "label": "Reasoning",
                "domain": "NeurIPS"}),
    '{"id": "m3", "sentence1": ',
    json.dumps(["not", "an", "object"]),
]


def write_scinli(path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "sentence1", "sentence2", "label"])
        writer.writerows(SCINLI_ROWS)
    return path


def write_mscinli(path: Path) -> Path:
    path.write_text("\n".join(MSCINLI_LINES) + "\n", encoding="utf-8")
    return path


def test_each_pair_becomes_the_scorers_own_request_and_the_labels_score(
        tmp_path: Path) -> None:
    result = convert_files([write_scinli(tmp_path / "train.csv")])
    assert [e["meta"]["id"] for e in result.examples] == ["s1", "s2", "s3", "s4"]
    first = result.examples[0]["messages"]
    # The request is exactly what the model scorer sends for one citing claim (the
    # hypothesis) and one cited claim (the premise).
    hypothesis, premise = SCINLI_ROWS[0][2], SCINLI_ROWS[0][1]
    call = entailment_call(load_prompt("score_entailment"),
                           [Claim(hypothesis, "EMPIRICAL", hypothesis)],
                           [Claim(premise, "THEORETICAL", premise)], "")
    assert first[:2] == call.prompt.render(call.inputs)
    assert [m["role"] for m in first] == ["system", "user", "assistant"]
    assert first[1]["content"].index(hypothesis) < first[1]["content"].index(premise)
    for example, (_, _, _, label) in zip(result.examples, SCINLI_ROWS, strict=False):
        reply = EntailmentReply.model_validate_json(example["messages"][2]["content"])
        assert check_entailment(reply, 1, 1) == []
        assert reply.matrix == [[LABEL_SCORES[label]]]
    assert [e["messages"][2]["content"] for e in result.examples] == [
        '{"matrix": [[1.0]]}', '{"matrix": [[0.5]]}', '{"matrix": [[0.0]]}',
        '{"matrix": [[0.0]]}']


def test_rows_that_cannot_be_examples_are_rejects_with_line_and_reason(tmp_path: Path) -> None:
    result = convert_files([write_scinli(tmp_path / "train.csv"),
                            write_mscinli(tmp_path / "mscinli.jsonl")])
    assert result.counts()["labels"] == {"contrasting": 1, "entailment": 2, "neutral": 1,
                                         "reasoning": 2}
    # CSV lines count the header: s5 is on line 6, s6 on line 7.
    assert [(r["file"], r["line"], r["reason"].split(":")[0]) for r in result.rejects] == [
        ("train.csv", 6, "empty_sentence"), ("train.csv", 7, "unknown_label"),
        ("mscinli.jsonl", 3, "malformed"), ("mscinli.jsonl", 4, "not_an_object")]
    mscinli = [e for e in result.examples if e["meta"]["source"] == "mscinli.jsonl"]
    assert [e["meta"]["domain"] for e in mscinli] == ["ACL", "NeurIPS"]
    assert mscinli[1]["meta"]["label"] == "reasoning"  # labels are read case-insensitively


def test_a_file_that_is_not_in_the_layout_is_a_named_error(tmp_path: Path) -> None:
    wrong = tmp_path / "pairs.csv"
    wrong.write_text("premise,hypothesis,gold\na,b,entailment\n", encoding="utf-8")
    with pytest.raises(NliDataInvalid, match="no column sentence1, sentence2, label"):
        convert_files([wrong])
    odd = tmp_path / "pairs.parquet"
    odd.write_bytes(b"PAR1")
    with pytest.raises(NliDataInvalid, match="name the file .csv, .tsv or .jsonl"):
        convert_files([odd])
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"sentence1": "a", "sentence2": "b", "label": "?"}) + "\n",
                     encoding="utf-8")
    with pytest.raises(NliDataInvalid, match="no usable pair"):
        convert_files([empty])
    with pytest.raises(NliDataInvalid, match="does not exist"):
        convert_files([tmp_path / "missing.csv"])


def test_the_conversion_is_recorded_as_a_run(graph: Graph, tmp_path: Path) -> None:
    out = tmp_path / "train.chat.jsonl"
    result = build_entailment_data(graph, [write_scinli(tmp_path / "train.csv")], out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 4 and lines[0]["messages"][2]["content"] == '{"matrix": [[1.0]]}'
    rejects = Path(result["rejects_file"]).read_text(encoding="utf-8").splitlines()
    assert len(rejects) == 2
    record = read_run_record(graph, result["run_id"])
    assert record is not None
    assert (record["kind"], record["status"]) == ("entailment_data", "done")
    assert record["counts"]["examples"] == 4 and record["counts"]["rejects"] == 2
    assert record["backends"] == {"prompt": "score_entailment@2"}


def test_the_command_line(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = cli_env / "data.jsonl"
    code = main(["entailment-data", str(write_scinli(cli_env / "train.csv")),
                 str(write_mscinli(cli_env / "dev.jsonl")), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "6 examples (contrasting 1, entailment 2, neutral 1, reasoning 2), 4 rejects" in printed
    assert len(out.read_text(encoding="utf-8").splitlines()) == 6
    assert main(["entailment-data", str(cli_env / "train.csv"), "--out",
                 str(cli_env / "nowhere" / "x.jsonl")]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_the_http_route(client: TestClient) -> None:  # noqa: F811
    pairs = [{"id": i, "sentence1": p, "sentence2": h, "label": label}
             for i, p, h, label in SCINLI_ROWS]
    response = client.post("/entailment-data", json={"pairs": pairs})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["counts"]["examples"] == 4 and len(body["rejects"]) == 2
    assert body["rejects"][0] == {"file": "request", "line": 5,
                                  "reason": "empty_sentence: sentence1 and sentence2 must "
                                            "both have text"}
    assert body["examples"][1]["messages"][2]["content"] == '{"matrix": [[0.5]]}'
    run = client.get(f"/runs/{body['run_id']}").json()
    assert run["kind"] == "entailment_data" and run["status"] == "done"
    schema = client.get("/schema/openapi.json").json()
    assert "/entailment-data" in schema["paths"]
    assert client.post("/entailment-data", json={"pairs": []}).status_code == 400
    assert client.post("/entailment-data", json={"pairs": pairs},
                       headers={"X-API-Key": "not-a-key"}).status_code == 401


def test_the_fine_tuning_recipe_has_the_papers_settings() -> None:
    recipe = yaml.safe_load((Path(__file__).parents[2] / "docs" / "finetune-entailment.yaml")
                            .read_text(encoding="utf-8"))
    assert recipe["model_name_or_path"] == "Qwen/Qwen2.5-3B-Instruct"
    assert (recipe["stage"], recipe["finetuning_type"], recipe["template"]) == (
        "sft", "full", "qwen")
    assert recipe["num_train_epochs"] == 4 and recipe["learning_rate"] == 1e-5
    assert recipe["lr_scheduler_type"] == "cosine" and recipe["bf16"] is True
    assert (recipe["cutoff_len"], recipe["per_device_train_batch_size"],
            recipe["gradient_accumulation_steps"], recipe["warmup_ratio"],
            recipe["val_size"], recipe["eval_steps"]) == (2048, 16, 1, 0.1, 0.1, 500)
