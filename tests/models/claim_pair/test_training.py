"""`crase train-entailment` on a small slice written here in SciNLI's layouts: two runs
write the same bytes, the stored arrays are scikit-learn's fitted head split by column
block, a flag out of its range is a named error and writes nothing, and the stored
threshold is the dev sets' best cut."""

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest

from crase.api.cli import main
from crase.errors import NliDataInvalid, TrainingFlagInvalid
from crase.models.claim_pair.classifier import FORMAT, load_classifier, model_json
from crase.models.claim_pair.training import (
    LabelledPair,
    TrainingOptions,
    choose_threshold,
    design_matrix,
    fit_classifier,
    pair_table,
    predict,
)
from crase.research.entailment_data import read_labelled_pairs

SAMPLE_PAPERS = Path(__file__).resolve().parents[3] / "data" / "sample" / "papers.jsonl"
LABELS = ("entailment", "reasoning", "contrasting", "neutral")


def sentence_pairs(count: int, seed: int) -> list[tuple[str, str, str, str]]:
    """(id, sentence1, sentence2, label) rows of made-up scientific sentences."""
    rng = random.Random(seed)
    subjects = ["the parser", "our model", "the corpus", "the encoder", "the baseline",
                "the attention layer", "the tagger", "the decoder"]
    verbs = ["improves", "reduces", "ignores", "predicts", "requires", "outperforms"]
    objects = ["long sentences", "rare words", "the error rate", "annotated data",
               "syntactic structure", "training time"]
    rows = []
    for i in range(count):
        first = f"{rng.choice(subjects).capitalize()} {rng.choice(verbs)} {rng.choice(objects)}."
        second = f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)}."
        rows.append((f"p{seed}_{i}", first, second, LABELS[i % 4]))
    return rows


def write_nli(folder: Path) -> Path:
    """train_1.tsv, train_2.tsv, scinli/dev.csv (leading index column) and mscinli/dev.csv
    (with domain), as the data sets ship them."""
    (folder / "scinli").mkdir(parents=True)
    (folder / "mscinli").mkdir()
    for number in (1, 2):
        with (folder / f"scinli/train_{number}.tsv").open("w", newline="") as handle:
            writer = csv.writer(handle, delimiter="\t")
            writer.writerow(["id", "sentence1", "sentence2", "label"])
            writer.writerows(sentence_pairs(24, number))
    with (folder / "scinli/dev.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "id", "sentence1", "sentence2", "label"])
        writer.writerows((i, *row) for i, row in enumerate(sentence_pairs(16, 3)))
    with (folder / "mscinli/dev.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "sentence1", "sentence2", "label", "domain"])
        writer.writerows((*row, "NeurIPS") for row in sentence_pairs(12, 4))
    return folder


def train(nli: Path, out: Path) -> None:
    assert main(["train-entailment", "--nli", str(nli), "--out", str(out), "--mine",
                 str(SAMPLE_PAPERS), "--limit", "200", "--l2", "0.05"]) == 0


@pytest.mark.slow
def test_training_twice_writes_the_same_bytes(tmp_path: Path) -> None:
    nli = write_nli(tmp_path / "nli")
    train(nli, tmp_path / "first.json")
    train(nli, tmp_path / "second.json")
    first = (tmp_path / "first.json").read_bytes()
    assert first == (tmp_path / "second.json").read_bytes()
    model = load_classifier(tmp_path / "first.json")
    assert model.description["training_pairs"]["human"] == 48
    assert model.description["options"]["l2"] == 0.05
    assert model.description["training_pairs"]["mined"] > 0
    stored = json.loads(first)
    assert stored["format"] == FORMAT
    assert stored["threshold"] == model.threshold
    assert "hidden_weights" not in stored["arrays"]
    assert model_json(model).encode("utf-8") == first


def test_dev_folds_train_on_the_dev_pairs_with_out_of_fold_figures(tmp_path: Path) -> None:
    nli = write_nli(tmp_path / "nli")
    out = tmp_path / "folds.json"
    assert main(["train-entailment", "--nli", str(nli), "--out", str(out),
                 "--dev-folds", "3"]) == 0
    model = load_classifier(out)
    assert model.description["dev_folds"] == 3
    assert model.description["training_pairs"] == {"human": 48 + 16 + 12}
    assert set(model.description["dev"]) == {"scinli_dev", "mscinli_dev"}
    assert "dev_folds" not in load_classifier().description


def test_a_bad_training_row_is_a_named_error(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    nli = write_nli(tmp_path / "nli")
    with (nli / "scinli/train_2.tsv").open("a", newline="") as handle:
        csv.writer(handle, delimiter="\t").writerow(["bad", "A premise.", "A hypothesis.",
                                                     "contradiction"])
    assert main(["train-entailment", "--nli", str(nli), "--out", str(tmp_path / "m.json")]) == 2
    assert "NliDataInvalid" in capsys.readouterr().err
    with pytest.raises(NliDataInvalid, match="train_2.tsv, line 26: unknown_label"):
        read_labelled_pairs(nli / "scinli/train_2.tsv")


@pytest.mark.parametrize("flags", [
    ["--l2", "0"], ["--l2", "-0.01"], ["--l2", "nan"], ["--l2", "inf"],
    ["--limit", "0"], ["--limit", "-5"], ["--mined-weight", "0"], ["--dev-folds", "1"],
    ["--neutral-share", "1.5"], ["--seed", "-1"]])
def test_a_flag_out_of_range_is_a_named_error_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    nli = write_nli(tmp_path / "nli")
    out = tmp_path / "m.json"
    assert main(["train-entailment", "--nli", str(nli), "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crase: TrainingFlagInvalid: ") and flags[0] in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_the_options_themselves_refuse_a_penalty_that_is_no_number() -> None:
    with pytest.raises(TrainingFlagInvalid, match="--l2 must be a finite number above 0"):
        TrainingOptions(l2=float("nan"), mined_weight=1.0)
    with pytest.raises(TrainingFlagInvalid, match="--mined-weight"):
        TrainingOptions(l2=0.01, mined_weight=float("inf"))


@pytest.mark.parametrize("flag", ["--epochs", "--hidden-units", "--learning-rate"])
def test_the_hand_fit_head_s_flags_are_gone(tmp_path: Path, flag: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train-entailment", "--nli", str(tmp_path), "--out", str(tmp_path / "m"),
                 flag, "3"]) == 2
    assert f"unrecognized arguments: {flag} 3" in capsys.readouterr().err


def made_up_training(count: int, seed: int) -> tuple[list[LabelledPair], list[str],
                                                     np.ndarray]:
    """Pairs of made-up sentences, and random unit vectors standing in for the encoder's."""
    rows = sentence_pairs(count, seed)
    pairs = [LabelledPair(first, second, label, "made-up") for _, first, second, label in rows]
    texts = sorted({text for pair in pairs for text in (pair.premise, pair.hypothesis)})
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(texts), 16))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return pairs, texts, vectors


def test_stored_arrays_give_scikit_learn_s_probabilities() -> None:
    """The head's columns split into out_weights, wide_hypothesis and wide_premise and read
    back by the scorer's path give the probabilities of the fitted LogisticRegression: a
    block stored under the other side's name would not."""
    from sklearn.linear_model import LogisticRegression

    pairs, texts, vectors = made_up_training(160, 7)
    options = TrainingOptions(l2=0.01, mined_weight=0.3, buckets=512)
    model = fit_classifier(pairs, texts, vectors, "made-up-encoder", options, {})
    table = pair_table(pairs, texts, vectors, options.buckets, options.mined_weight)
    x = design_matrix(table, model.arrays["mean"], model.arrays["scale"], options.buckets)
    reference = LogisticRegression(C=1 / (options.l2 * len(pairs)), max_iter=2000,
                                   tol=1e-6).fit(x, table.labels)
    ours = predict(model, texts, vectors, table)
    assert np.abs(ours - reference.predict_proba(x)).max() < 1e-3
    assert np.abs(model.arrays["wide_hypothesis"]).max() > 0
    assert np.abs(model.arrays["wide_premise"]).max() > 0
    # A larger penalty is a smaller head: the option reaches the fit.
    stricter = fit_classifier(pairs, texts, vectors, "made-up-encoder",
                              TrainingOptions(l2=1.0, mined_weight=0.3, buckets=512), {})
    assert (np.abs(stricter.arrays["out_weights"]).sum()
            < np.abs(model.arrays["out_weights"]).sum())


def test_the_same_pairs_give_the_same_bytes_without_the_encoder() -> None:
    pairs, texts, vectors = made_up_training(120, 3)
    options = TrainingOptions(l2=0.01, mined_weight=0.3, buckets=1024)
    first = model_json(fit_classifier(pairs, texts, vectors, "e", options, {}))
    second = model_json(fit_classifier(pairs, texts, vectors, "e", options, {}))
    assert first == second


def test_training_pairs_of_three_classes_are_a_named_error() -> None:
    pairs, texts, vectors = made_up_training(40, 5)
    kept = [pair for pair in pairs if pair.label != "neutral"]
    with pytest.raises(NliDataInvalid, match="all four classes"):
        fit_classifier(kept, texts, vectors, "e", TrainingOptions(l2=0.01, mined_weight=1.0,
                                                                   buckets=64), {})


def test_threshold_is_the_best_cut_nearest_one_half() -> None:
    grounded = np.array([0.1, 0.3, 0.35, 0.6, 0.7, 0.9])
    truth = np.array([False, False, True, True, True, True])
    assert choose_threshold(grounded, truth) == 0.35
    assert choose_threshold(np.array([0.2, 0.8]), np.array([False, True])) == 0.5
