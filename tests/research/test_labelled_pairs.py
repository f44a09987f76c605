"""The SciNLI / MSciNLI reader (`read_labelled_pairs`) on rows copied from the published
files in their own shapes: SciNLI dev's CSV with an unnamed index column first, MSciNLI
dev's CSV with a domain last, the SciNLI human-labelled training TSV with CRLF line ends.
Server-free."""

from pathlib import Path

import pytest

from crase.bench.entailment_pairs import is_grounded
from crase.errors import NliDataInvalid
from crase.research.entailment_data import read_labelled_pairs

SCINLI_DEV = (
    ",id,sentence1,sentence2,label\n"
    "0,dev_0,Robustness to noise was only achieved by training with the same "
    "distribution-at the expense of performance degradation on other types of noise.,"
    "our method performed well on natural noise at test time by using a simplified "
    "synthetic noise model during training.,contrasting\n"
    "1,dev_1,The field has largely moved toward probabilistic decoding strategies that "
    "randomly sample from the output distribution token-by-token.,\"when many "
    "low-likelihood words cumulatively contain quite a bit of probability mass, choosing "
    "one of these words can lead to odd or contradictory phrases and semantic errors.\","
    "contrasting\n")
MSCINLI_DEV = (
    "id,sentence1,sentence2,label,domain\n"
    "dev_0,\"Working memory (Miyake and Shah, 1999) is a short-term temporary store with "
    "limited capacity.\",\"thus as a new (p i , v i , k i )-triplet is added to the MEM, "
    "there are trade-offs to be made regarding computational complexity versus performance "
    "of the agent.\",neutral,NeurIPS\n"
    "dev_1,\"We hypothesize that in general the agent should perform the best in training, "
    "somewhat worse on the holdout-interpolation level and the worst on the "
    "holdout-extrapolation level.\",we expect to see a generalization gap.,entailment,"
    "NeurIPS\n")
SCINLI_TRAIN = (
    "id\tsentence1\tsentence2\tlabel\r\n"
    "train_543\t\"Specifically, we do not make use of the possibilities offered by the "
    "interleaving of the RE and LC, as the examples we cover are too simple.\"\t\"this setup "
    "enables RE, in principle, to make use of information about precisely how a previous "
    "reference to an entity has been realised.\"\tcontrasting\r\n"
    "train_2447\t\"Since the position of a word plays an important role as a syntactic "
    "constraint in English, the methods are successful even with local information.\"\t"
    "\"these methods are not appropriate for chunking Korean and Japanese, because such "
    "languages have a characteristic of partially free wordorder.\"\tcontrasting\r\n")


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_scinli_dev_shape_the_index_column_is_ignored(tmp_path: Path) -> None:
    pairs = read_labelled_pairs(write(tmp_path / "dev.csv", SCINLI_DEV))
    assert len(pairs) == 2
    premise, hypothesis, label = pairs[1]
    assert premise.startswith("The field has largely moved")
    assert hypothesis.startswith("when many low-likelihood words cumulatively contain")
    assert hypothesis.endswith("semantic errors.")
    assert label == "contrasting"


def test_mscinli_dev_shape_with_its_domain(tmp_path: Path) -> None:
    pairs = read_labelled_pairs(write(tmp_path / "dev.csv", MSCINLI_DEV))
    assert pairs[0][0] == ("Working memory (Miyake and Shah, 1999) is a short-term temporary "
                           "store with limited capacity.")
    assert [label for _, _, label in pairs] == ["neutral", "entailment"]
    assert pairs[1][1] == "we expect to see a generalization gap."


def test_training_tsv_shape_with_crlf_line_ends(tmp_path: Path) -> None:
    pairs = read_labelled_pairs(write(tmp_path / "train_2.tsv", SCINLI_TRAIN))
    assert len(pairs) == 2
    assert pairs[0][0].startswith("Specifically, we do not make use")
    assert pairs[1][1].endswith("partially free wordorder.")
    assert all("\r" not in text for pair in pairs for text in pair)


def test_the_labels_map_to_two_classes() -> None:
    assert [is_grounded(label) for label in ("entailment", "reasoning", "contrasting",
                                             "neutral")] == [True, True, False, False]


def test_a_bad_row_is_a_named_error_with_its_file_and_line(tmp_path: Path) -> None:
    bad_label = SCINLI_DEV + "2,dev_2,A premise.,A hypothesis.,contradiction\n"
    with pytest.raises(NliDataInvalid, match=r"dev\.csv, line 4: unknown_label"):
        read_labelled_pairs(write(tmp_path / "dev.csv", bad_label))
    empty = MSCINLI_DEV.replace("we expect to see a generalization gap.", "")
    with pytest.raises(NliDataInvalid, match=r"line 3: empty_sentence"):
        read_labelled_pairs(write(tmp_path / "mscinli.csv", empty))
    with pytest.raises(NliDataInvalid, match="no column sentence2"):
        read_labelled_pairs(write(tmp_path / "other.csv", "id,sentence1,label\n"))
