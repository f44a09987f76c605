"""The offline entailment scorer: cosine similarity of MiniLM claim embeddings.

M[i, j] = clip(cos(e(citing claim i), e(cited claim j)), 0, 1).

Why the plain clipped cosine and no fitted rescale: Delta only asks whether a row maximum
reaches theta, so any increasing map of the cosine with theta moved through the same map
gives exactly the same Delta, pruning and weights. The identity keeps the stored matrices
readable (a value is a cosine) and puts all calibration into one number, theta, chosen from
data by `python -m crase.bench.calibrate_theta` (docs/model-roles.md, "Entailment
backend: numpy MiniLM").
Negative cosines (rare with this model) become 0: unrelated, not "anti-grounded".

This is semantic similarity, not entailment: it says two claims are about the same thing,
not that one supports the other. The scorer's name says so wherever its matrices are stored.
"""

import numpy as np
from numpy.typing import NDArray

from crase.models.minilm import MiniLmEncoder
from crase.scoring.claims import Claim
from crase.usage import Usage

FloatArray = NDArray[np.float64]


def cosine_matrix(citing: NDArray[np.float32], cited: NDArray[np.float32]) -> FloatArray:
    """Clipped cosines of unit vectors: rows citing, columns cited."""
    return np.clip(citing.astype(np.float64) @ cited.astype(np.float64).T, 0.0, 1.0)


class OfflineEntailmentScorer:
    """EntailmentScorer without a model server: clipped cosine of claim embeddings."""

    name = "offline-minilm-cosine"
    version = "1"

    def __init__(self, encoder: MiniLmEncoder | None = None) -> None:
        self.encoder = encoder or MiniLmEncoder()
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
        self.usage.models.add(f"{self.encoder.name} (numpy)")
        return out
