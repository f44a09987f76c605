"""The offline entailment scorer: clipped cosine of MiniLM claim embeddings."""

import numpy as np
import pytest

from crase.models.minilm import NumpyBertEncoder
from crase.scoring.claims import Claim
from crase.scoring.delta import coverage_affinity
from crase.search.roles.cosine_entailment import CosineEntailmentScorer, cosine_matrix
from crase.settings import SearchSettings


def claim(text: str) -> Claim:
    return Claim(text=text, type="THEORETICAL", source_phrase=text)


CITING = [
    claim("We compute the entropy of extremal black holes by counting D-brane states."),
    claim("The one-loop correction to the string spectrum vanishes."),
    claim("Cats sleep for most of the day."),
]
CITED = [
    claim("Black hole entropy is reproduced by counting bound states of D-branes."),
    claim("We derive the tree-level spectrum of the superstring."),
]


@pytest.fixture(scope="module")
def encoder() -> NumpyBertEncoder:
    return NumpyBertEncoder()


def test_matrix_is_the_clipped_cosine_of_the_embeddings(encoder: NumpyBertEncoder) -> None:
    scorer = CosineEntailmentScorer(encoder)
    [matrix] = scorer.score([(CITING, CITED)])
    assert matrix is not None and matrix.shape == (3, 2) and matrix.dtype == np.float64
    a = encoder.encode([c.text for c in CITING]).astype(np.float64)
    b = encoder.encode([c.text for c in CITED]).astype(np.float64)
    np.testing.assert_allclose(matrix, np.clip(a @ b.T, 0, 1), atol=1e-12)
    assert ((matrix >= 0) & (matrix <= 1)).all()


def test_related_claims_score_above_unrelated_ones(encoder: NumpyBertEncoder) -> None:
    [matrix] = CosineEntailmentScorer(encoder).score([(CITING, CITED)])
    assert matrix is not None
    assert matrix[0, 0] > 0.6  # the same result in other words
    assert matrix[0, 0] > matrix[0, 1] and matrix[1, 1] > matrix[1, 0]
    assert matrix[2].max() < 0.2  # cats ground nothing
    theta = SearchSettings().theta
    # At the default theta the black-hole claim is grounded, the cat claim is not.
    assert matrix[0].max() >= theta > matrix[2].max()
    assert 0 < coverage_affinity(matrix, theta) < 1


def test_identical_claims_score_one_and_negatives_clip_to_zero() -> None:
    same = np.array([[0.6, 0.8, 0.0]], dtype=np.float32)
    opposite = -same
    np.testing.assert_allclose(cosine_matrix(same, same), [[1.0]], atol=1e-6)
    assert cosine_matrix(same, opposite)[0, 0] == 0.0


def test_missing_claims_give_none_not_zero(encoder: NumpyBertEncoder) -> None:
    scorer = CosineEntailmentScorer(encoder)
    out = scorer.score([(CITING, []), ([], CITED), (CITING[:1], CITED[:1])])
    assert out[0] is None and out[1] is None
    assert out[2] is not None and out[2].shape == (1, 1)
    assert scorer.usage.calls == 3
    assert scorer.usage.made == 1 and scorer.usage.failed == 2
    assert scorer.score([]) == []


def test_each_distinct_claim_is_embedded_once_per_batch() -> None:
    encoder = NumpyBertEncoder(cache_size=100)
    scorer = CosineEntailmentScorer(encoder)
    pairs = [(CITING, CITED), (CITED, CITING), (CITING[:2], CITING[:2])]
    matrices = scorer.score(pairs)
    assert len(encoder._cache) == len({c.text for c in CITING + CITED})
    first, second = matrices[0], matrices[1]
    assert first is not None and second is not None
    np.testing.assert_allclose(first, second.T, atol=1e-12)  # cosine is symmetric
    assert scorer.name == "offline-minilm-cosine" and scorer.version == "1"
