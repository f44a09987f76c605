"""The cosine entailment scorer (`models.entailment_scorer` cosine, the default where no
entailment endpoint is configured): cosine similarity of MiniLM claim embeddings.

M[i, j] = clip(cos(e(citing claim i), e(cited claim j)), 0, 1).

Why the plain clipped cosine and no fitted rescale: Delta only asks whether a row maximum
reaches theta, so any increasing map of the cosine with theta moved through the same map
gives exactly the same Delta, pruning and weights. The identity keeps the stored matrices
readable (a value is a cosine) and puts all calibration into one number, theta, chosen from
data by `python -m crase.bench.calibrate_theta` (docs/model-roles.md, "Entailment
backend").
Negative cosines (rare with this model) become 0: unrelated, not "anti-grounded".

Two encoders compute e, as `models.claim_encoder` chooses (models/claim_encoders.py): the
numpy forward pass (`models/minilm.py`) and the packaged int8 ONNX graph on ONNX Runtime
(`models/onnx_minilm.py`, about five times faster on a CPU, its vectors within a cosine of
about 0.99 of the numpy ones). Each has its own scorer name, so matrices stored by one are
never read as the other's.

This is semantic similarity, not entailment: it says two claims are about the same thing,
not that one supports the other. The scorer's name says so wherever its matrices are stored.
How far that gets on the SciNLI / MSciNLI pairs: `crase bench entailment` (docs/entailment.md).
"""

import numpy as np
from numpy.typing import NDArray

from crase.errors import SettingsError
from crase.models.claim_encoders import claim_encoder
from crase.models.minilm import SentenceEncoder
from crase.scoring.claims import Claim
from crase.usage import Usage

FloatArray = NDArray[np.float64]

# Scorer name per encoder (its `name`), and how the usage record describes the encoder.
SCORER_NAMES = {
    "all-MiniLM-L6-v2": "offline-minilm-cosine",
    "all-MiniLM-L6-v2-onnx-int8": "offline-minilm-int8-cosine",
}
# The two-class cut (grounded = SciNLI's entailment or reasoning) on each scorer's cosine,
# chosen on SciNLI dev + MSciNLI dev by
#   python -m crase.bench.entailment_pairs calibrate \
#     --pairs ../shared/data/nli/scinli/dev.csv --pairs ../shared/data/nli/mscinli/dev.csv
# and read by `crase bench entailment`. Not theta: the search's Delta cut is a setting,
# chosen on citation edges by crase.bench.calibrate_theta.
TWO_CLASS_THRESHOLDS = {"offline-minilm-cosine": 0.365, "offline-minilm-int8-cosine": 0.36}
RUNTIMES = {"all-MiniLM-L6-v2": "numpy", "all-MiniLM-L6-v2-onnx-int8": "onnxruntime"}


def cosine_matrix(citing: NDArray[np.float32], cited: NDArray[np.float32]) -> FloatArray:
    """Clipped cosines of unit vectors: rows citing, columns cited."""
    return np.clip(citing.astype(np.float64) @ cited.astype(np.float64).T, 0.0, 1.0)


class CosineEntailmentScorer:
    """EntailmentScorer without a model server: clipped cosine of claim embeddings.
    Named after its encoder (SCORER_NAMES); default encoder: `claim_encoder("auto")`."""

    version = "1"

    def __init__(self, encoder: SentenceEncoder | None = None) -> None:
        self.encoder = encoder or claim_encoder()
        if self.encoder.name not in SCORER_NAMES:
            raise SettingsError(f"no offline scorer for encoder {self.encoder.name!r}; "
                                f"use one of {', '.join(SCORER_NAMES)}")
        self.name = SCORER_NAMES[self.encoder.name]
        self.threshold = TWO_CLASS_THRESHOLDS[self.name]
        self.usage = Usage()

    def score(
        self, pairs: list[tuple[list[Claim], list[Claim]]]
    ) -> list[FloatArray | None]:
        """One matrix per (citing claims, cited claims); None where a side has no claims
        (missing evidence is not scored as zero). All claim texts of the batch are embedded
        in one encoder call, each distinct text once."""
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
            a = vectors[[row[c.text] for c in citing]]
            b = vectors[[row[c.text] for c in cited]]
            out.append(cosine_matrix(a, b))
            self.usage.made += 1
        self.usage.models.add(f"{self.encoder.name} ({RUNTIMES[self.encoder.name]})")
        return out
