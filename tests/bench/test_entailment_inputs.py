"""The entailment tools refuse what they cannot use, each with its named error in one line
(no traceback) and before any model is loaded: hostile pairs files for `crase bench
entailment`, a classifier model file that is no usable model (the one
CRASE_MODELS__ENTAILMENT_MODEL names, which `--scorer classifier` reads), and flags of
`crase train-entailment` that would train a NaN model or drop rows silently."""

import json
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.errors import EntailmentModelInvalid
from crase.models.claim_pair.classifier import (
    SHIPPED_MODEL,
    load_classifier,
    round_weights,
    save_classifier,
)

HEADER = "id,sentence1,sentence2,label\n"


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error, error
    return error


@pytest.mark.parametrize(("name", "text", "said"), [
    ("long.csv", HEADER + "1," + "x" * 140_000 + ",b,neutral\n", "field larger than field limit"),
    ("deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ("huge.jsonl", '{"id": ' + "9" * 5_000 + ', "sentence1": "a", "sentence2": "b", '
     '"label": "neutral"}\n', "more digits than Python reads"),
    ("list.jsonl", json.dumps({"sentence1": ["a", "b"], "sentence2": "c",
                               "label": "neutral"}) + "\n", "sentence1 is a list, not text"),
])
def test_a_hostile_pairs_file_is_one_named_line(
        name: str, text: str, said: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    error = one_line_error(capsys, ["bench", "entailment", "--pairs", str(path),
                                    "--scorer", "classifier"])
    assert error.startswith("crase: NliDataInvalid: ") and said in error


def model_file(tmp_path: Path, **changes: object) -> Path:
    stored = json.loads(SHIPPED_MODEL.read_text(encoding="utf-8"))
    stored.update(changes)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(stored), encoding="utf-8")  # NaN is written as NaN
    return path


@pytest.mark.parametrize(("changes", "said"), [
    ({"buckets": -4}, "buckets is -4, not 1 to"),
    ({"buckets": 0}, "buckets is 0, not 1 to"),
    ({"threshold": float("nan")}, "threshold is nan, not a probability"),
    ({"threshold": 7.5}, "threshold is 7.5, not a probability"),
    ({"buckets": 12}, "the table wide_hypothesis has shape (32768, 4), not (12, 4)"),
])
def test_bench_entailment_reads_the_configured_model_and_refuses_an_unusable_one(
        changes: dict[str, object], said: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text(HEADER + "1,A claim.,Another claim.,neutral\n", encoding="utf-8")
    model = model_file(tmp_path, **changes)
    monkeypatch.setenv("CRASE_MODELS__ENTAILMENT_MODEL", str(model))
    error = one_line_error(capsys, ["bench", "entailment", "--pairs", str(pairs),
                                    "--scorer", "classifier"])
    assert error.startswith(f"crase: EntailmentModelInvalid: {model}: {said}"), error


def test_a_model_file_that_is_deep_or_huge_json_is_refused_by_name(tmp_path: Path) -> None:
    deep, huge = tmp_path / "deep.json", tmp_path / "huge.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    huge.write_text('{"buckets": ' + "9" * 5_000 + "}")
    with pytest.raises(EntailmentModelInvalid, match="nested too deeply"):
        load_classifier(deep)
    with pytest.raises(EntailmentModelInvalid, match="not a claim-pair model"):
        load_classifier(huge)


def test_a_model_with_a_nan_weight_is_never_written(tmp_path: Path) -> None:
    model = round_weights(load_classifier())
    model.arrays["out_bias"][0] = float("nan")
    with pytest.raises(EntailmentModelInvalid, match="out_bias hold values that are not"):
        save_classifier(model, tmp_path / "nan.json")
    assert not (tmp_path / "nan.json").exists()


def test_bench_entailment_refuses_a_negative_limit_and_names_no_flag_it_lacks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "give a whole number at least 1" in one_line_error(
        capsys, ["bench", "entailment", "--pairs", "p.csv", "--scorer", "classifier",
                 "--limit", "-3"])
    odd = tmp_path / "pairs.parquet"
    odd.write_bytes(b"PAR1")
    error = one_line_error(capsys, ["bench", "entailment", "--pairs", str(odd),
                                    "--scorer", "classifier"])
    assert "name the file .csv, .tsv or .jsonl" in error and "give --layout" not in error
