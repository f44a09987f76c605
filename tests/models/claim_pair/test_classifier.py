"""The claim-pair classifier and its entailment scorer, server-free: the shipped file loads
with its stored threshold, a batch gives one matrix per edge, the same batch gives the same
numbers to the last digit, a file that is not a model is a named error, and a file of the
earlier format (the hand-fit head) is a named error of its own that says to retrain."""

import json
from pathlib import Path

import numpy as np
import pytest

from crase.errors import EntailmentModelInvalid, EntailmentModelOutdated
from crase.models.claim_pair.classifier import FORMAT, LABELS, SHIPPED_MODEL, load_classifier
from crase.scoring.claims import Claim
from crase.search.roles.classifier_entailment import ClassifierEntailmentScorer


def claims(*texts: str) -> list[Claim]:
    return [Claim(text, "EMPIRICAL", text) for text in texts]


CITING = claims("We show that the tachyon condenses on the D-brane.",
                "The spectrum therefore has no massless open-string modes.")
CITED = claims("Tachyon condensation on unstable D-branes is studied in string field theory.",
               "The effective potential has a stable minimum.",
               "We use lattice simulations of gauge theories.")


@pytest.fixture(scope="module")
def scorer() -> ClassifierEntailmentScorer:
    return ClassifierEntailmentScorer()


def test_shipped_model_carries_the_threshold_chosen_on_dev(
        scorer: ClassifierEntailmentScorer) -> None:
    model = load_classifier()
    assert 0.05 <= model.threshold <= 0.95
    assert scorer.threshold == model.threshold
    assert sorted(model.description["threshold_chosen_on"]) == ["mscinli_dev", "scinli_dev"]
    assert set(model.description["dev"]) == {"scinli_dev", "mscinli_dev"}
    assert scorer.name == "offline-claim-pair-classifier"
    assert scorer.version.startswith(model.name)


def test_one_matrix_per_edge_none_without_claims(scorer: ClassifierEntailmentScorer) -> None:
    matrices = scorer.score([(CITING, CITED), ([], CITED), (CITED, CITING), (CITING, [])])
    first, missing, third, empty = matrices
    assert missing is None and empty is None
    assert first is not None and first.shape == (2, 3)
    assert third is not None and third.shape == (3, 2)
    assert np.all((first >= 0) & (first <= 1))


def test_a_batch_that_fills_the_kept_terms_is_scored_as_any_other(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past TERMS_KEPT the kept terms are emptied; claims of the batch met before are then
    computed again, not looked up in the emptied memo."""
    from crase.search.roles import classifier_entailment

    unbounded = ClassifierEntailmentScorer()
    unbounded.score([(CITING, CITING)])
    fresh = unbounded.score([(CITING, CITED)])
    scorer = ClassifierEntailmentScorer()
    monkeypatch.setattr(classifier_entailment, "TERMS_KEPT", len(CITING) + 1)
    scorer.score([(CITING, CITING)])  # keeps the citing claims' terms
    again = scorer.score([(CITING, CITED)])  # those kept, the cited ones past the bound
    assert fresh[0] is not None and again[0] is not None
    assert again[0].tobytes() == fresh[0].tobytes()


def test_same_batch_same_numbers_to_the_last_digit() -> None:
    batch = [(CITING, CITED), (CITED[:1], CITING)]
    once = ClassifierEntailmentScorer().score(batch)
    again = ClassifierEntailmentScorer().score(batch)
    for a, b in zip(once, again, strict=True):
        assert a is not None and b is not None
        assert a.tobytes() == b.tobytes()


def test_a_matrix_holds_each_pair_s_own_probability(scorer: ClassifierEntailmentScorer) -> None:
    [matrix] = scorer.score([(CITING, CITED)])
    assert matrix is not None
    for i, citing in enumerate(CITING):
        for j, cited in enumerate(CITED):
            [single] = scorer.score([([citing], [cited])])
            assert single is not None
            assert single[0, 0] == pytest.approx(matrix[i, j], abs=1e-12)


def test_four_classes_read_premise_then_hypothesis(scorer: ClassifierEntailmentScorer) -> None:
    pairs = [(c.text, h.text) for c in CITED for h in CITING]
    labels = scorer.four_class(pairs)
    assert len(labels) == len(pairs) and set(labels) <= set(LABELS)
    assert scorer.four_class([]) == []


def test_a_file_that_is_no_model_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(EntailmentModelInvalid, match="does not exist"):
        load_classifier(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "crase-linear-ranker/1"}', encoding="utf-8")
    with pytest.raises(EntailmentModelInvalid, match="crase train-entailment"):
        load_classifier(broken)
    assert SHIPPED_MODEL.stat().st_size < 25_000_000


def test_a_file_of_the_hand_fit_format_says_to_retrain(tmp_path: Path) -> None:
    shipped = json.loads(SHIPPED_MODEL.read_text(encoding="utf-8"))
    assert shipped["format"] == FORMAT == "crase-claim-pair-classifier/2"
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**shipped, "format": "crase-claim-pair-classifier/1"}),
                   encoding="utf-8")
    with pytest.raises(EntailmentModelOutdated) as raised:
        load_classifier(old)
    message = str(raised.value)
    assert "\n" not in message
    assert "no longer reads" in message and "retrain it with `crase train-entailment`" in message
