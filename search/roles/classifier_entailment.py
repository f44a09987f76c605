"""The claim-pair classifier as the entailment scorer: M[i, j] = the probability that
cited claim j grounds citing claim i (P(entailment) + P(reasoning) of the SciNLI classes),
from the head of models/claim_pair_classifier.py over the frozen int8 MiniLM claim vectors.

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
from crase.models.claim_pair_classifier import (
    GROUNDED,
    LABELS,
    SHIPPED_MODEL,
    ClaimPairClassifier,
    load_classifier,
)
from crase.models.minilm import SentenceEncoder
from crase.scoring.claims import Claim
from crase.search.roles.offline_entailment import claim_encoder
from crase.usage import Usage

FloatArray = NDArray[np.float64]
SCORER_NAME = "offline-claim-pair-classifier"


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

    def score(
        self, pairs: list[tuple[list[Claim], list[Claim]]]
    ) -> list[FloatArray | None]:
        """One matrix per (citing claims, cited claims); None where a side has no claims.
        All distinct claim texts of the batch are embedded in one encoder call."""
        texts = sorted({c.text for citing, cited in pairs for c in (*citing, *cited)})
        vectors = self.encoder.encode(texts) if texts else np.empty((0, 0), dtype=np.float32)
        row = {text: i for i, text in enumerate(texts)}
        out: list[FloatArray | None] = []
        for citing, cited in pairs:
            self.usage.calls += 1
            if not citing or not cited:
                self.usage.failed += 1
                out.append(None)
                continue
            probabilities = self.model.probabilities(
                self.model.side(vectors[[row[c.text] for c in citing]],
                                [c.text for c in citing], "hypothesis"),
                self.model.side(vectors[[row[c.text] for c in cited]],
                                [c.text for c in cited], "premise"))
            out.append(probabilities[:, :, list(GROUNDED)].sum(axis=2))
            self.usage.made += 1
        self.usage.models.add(f"{self.model.name} over {self.encoder.name}")
        return out

    def four_class(self, pairs: list[tuple[str, str]]) -> list[str]:
        """The most probable SciNLI class of each (sentence1 = cited claim / premise,
        sentence2 = citing claim / hypothesis)."""
        if not pairs:
            return []
        texts = sorted({text for pair in pairs for text in pair})
        vectors = self.encoder.encode(texts)
        row = {text: i for i, text in enumerate(texts)}
        premises = [p for p, _ in pairs]
        hypotheses = [h for _, h in pairs]
        labels = []
        for premise, hypothesis in zip(premises, hypotheses, strict=True):
            probabilities = self.model.probabilities(
                self.model.side(vectors[[row[hypothesis]]], [hypothesis], "hypothesis"),
                self.model.side(vectors[[row[premise]]], [premise], "premise"))
            labels.append(LABELS[int(np.argmax(probabilities[0, 0]))])
        return labels
