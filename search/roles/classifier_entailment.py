"""The claim-pair classifier as the entailment scorer: M[i, j] = the probability that
cited claim j grounds citing claim i (P(entailment) + P(reasoning) of the SciNLI classes),
from the head of models/claim_pair/classifier.py over the frozen int8 MiniLM claim vectors.

Each distinct claim text of a batch is embedded and tokenised once, then every edge's
matrix is the head over its pairs: no model server and no deep-learning framework. Its
scorer name differs from the cosine scorers', so matrices stored by one are never read as
the other's; the version follows the model file, so a retrained model rescoring the corpus
is a new version, not a silent mix.

`threshold` is the two-class cut chosen on the SciNLI and MSciNLI dev sets and stored with
the weights (docs/entailment.md): the theta this scorer's Delta is calibrated for.
"""

import hashlib
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from crase.errors import SettingsError
from crase.models.claim_encoders import claim_encoder
from crase.models.claim_pair.classifier import (
    GROUNDED,
    LABELS,
    SHIPPED_MODEL,
    ClaimPairClassifier,
    ClaimSide,
    claim_sides,
    load_classifier,
)
from crase.models.minilm import SentenceEncoder
from crase.scoring.claims import Claim
from crase.usage import Usage

FloatArray = NDArray[np.float64]
SCORER_NAME = "offline-claim-pair-classifier"
TERMS_KEPT = 400_000  # claims whose terms are kept: as many as `crase score` keeps vectors


def model_digest(path: Path) -> str:
    """12 hex digits of the model file's blake2b: the scorer's version is the model's name
    and this, so another file's matrices are never taken for this one's."""
    return hashlib.blake2b(path.read_bytes(), digest_size=6).hexdigest()


class ClassifierEntailmentScorer:
    """EntailmentScorer over the shipped claim-pair model (or the file `model_path`), its
    claims embedded by `encoder` (default: the int8 MiniLM the model was trained on)."""

    name = SCORER_NAME

    def __init__(self, model_path: Path | None = None,
                 encoder: SentenceEncoder | None = None) -> None:
        path = model_path or SHIPPED_MODEL
        self.model: ClaimPairClassifier = load_classifier(path)
        self.encoder = encoder or claim_encoder("onnx-int8")
        if self.encoder.name != self.model.encoder:
            raise SettingsError(
                f"the claim-pair model {path.name} reads vectors of {self.model.encoder}, "
                f"not {self.encoder.name}; give it that encoder or retrain it with "
                "`crase train-entailment`")
        self.version = f"{self.model.name}-{model_digest(path)}"
        self.threshold: float = self.model.threshold
        self.usage = Usage()
        # Each claim's words and wide terms, kept like its vector: a corpus-wide pass meets
        # a claim on many edges. Emptied when full (a claim's terms never change).
        self._terms: dict[str, tuple[list[str], FloatArray, FloatArray]] = {}

    def sides(self, texts: list[str]) -> tuple[ClaimSide, ClaimSide]:
        """The batch's claims as hypotheses and as premises (vectors and terms), as the
        model's own `sides` makes them, each claim's terms computed once (`kept_terms`)."""
        vectors = self.encoder.encode(texts) if texts else np.empty((0, 0), dtype=np.float32)
        return claim_sides(vectors, *self.kept_terms(texts))

    def kept_terms(self, texts: list[str]) -> tuple[list[list[str]], FloatArray, FloatArray]:
        """The model's `claim_terms` of the texts, those of a claim met before taken from
        the kept ones."""
        missing = [text for text in texts if text not in self._terms]
        if len(self._terms) + len(missing) > TERMS_KEPT:
            self._terms.clear()  # then none of the batch's claims is kept any more
            missing = list(dict.fromkeys(texts))
        words, hypothesis, premise = self.model.claim_terms(missing)
        for i, text in enumerate(missing):
            self._terms[text] = (words[i], hypothesis[i], premise[i])
        kept = [self._terms[text] for text in texts]
        shape = (len(texts), len(LABELS))
        as_hypothesis = np.array([terms[1] for terms in kept]).reshape(shape)
        as_premise = np.array([terms[2] for terms in kept]).reshape(shape)
        return [terms[0] for terms in kept], as_hypothesis, as_premise

    def score(
        self, pairs: list[tuple[list[Claim], list[Claim]]]
    ) -> list[FloatArray | None]:
        """One matrix per (citing claims, cited claims); None where a side has no claims.
        All distinct claim texts of the batch are embedded in one encoder call."""
        texts = sorted({c.text for citing, cited in pairs for c in (*citing, *cited)})
        row = {text: i for i, text in enumerate(texts)}
        hypotheses, premises = self.sides(texts)
        scorable = [(citing, cited) for citing, cited in pairs if citing and cited]
        # Every pair of every edge in one pass, citing-major within an edge.
        h = np.array([row[a.text] for citing, cited in scorable for a in citing
                      for _ in cited], dtype=np.int64)
        p = np.array([row[b.text] for citing, cited in scorable for _ in citing
                      for b in cited], dtype=np.int64)
        probabilities = self.model.pair_probabilities(hypotheses, premises, h, p)
        grounded = probabilities[:, list(GROUNDED)].sum(axis=1)
        out: list[FloatArray | None] = []
        start = 0
        for citing, cited in pairs:
            self.usage.calls += 1
            if not citing or not cited:
                self.usage.failed += 1
                out.append(None)
                continue
            size = len(citing) * len(cited)
            out.append(grounded[start:start + size].reshape(len(citing), len(cited)).copy())
            start += size
            self.usage.made += 1
        self.usage.models.add(f"{self.model.name} over {self.encoder.name}")
        return out

    def four_class(self, pairs: list[tuple[str, str]]) -> list[str]:
        """The most probable SciNLI class of each (sentence1 = cited claim / premise,
        sentence2 = citing claim / hypothesis)."""
        if not pairs:
            return []
        texts = sorted({text for pair in pairs for text in pair})
        row = {text: i for i, text in enumerate(texts)}
        hypotheses, premises = self.sides(texts)
        probabilities = self.model.pair_probabilities(
            hypotheses, premises, np.array([row[h] for _, h in pairs], dtype=np.int64),
            np.array([row[p] for p, _ in pairs], dtype=np.int64))
        return [LABELS[int(i)] for i in probabilities.argmax(axis=1)]
