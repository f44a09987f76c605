"""The learned final order of the idea workflow's shortlist: LightGBM's LambdaRank
(models/lambdarank.py) over three signals of each shortlisted work, trained from a corpus's
own citations (idea/final_order/training.py, `crase train-idea-order`).

- `fused_score`: the offline expert's reciprocal-rank fusion of its text signals (the
  idea-abstract cosine, the work's place in the idea's own text ranking, BM25 within the
  shortlist, the grade, a PDF window's cosine; idea/roles/offline_expert.py);
- `similarity`: the idea-abstract cosine, one of the fused signals, on its own scale: a
  work the idea does not speak of stays below one it does, however many links it has
  (without it, two links put off-topic works above an on-topic one on a small graph);
- `neighbour_links`: how many links of the citation gate join the work to the idea's
  seeds (idea/neighbour_gate.py: each seed the work cites or is cited by).

The model is monotone in all three (LightGBM's monotone constraints): more text evidence
or more citation links never lower a work. Where the graph links nothing, as in a corpus
with almost no citations, every work has 0 links. The other signals of a shortlisted work
(the other text signals alone, the assessment's similarities, the selection score,
full-text route ranks) were measured as features too and lost on a corpus of another
citation density (docs/idea.md, "The learned final order").

A model file is LightGBM's text format, named by its file name; it is read with a size
bound and a feature-list check, never unpickled.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from crase.errors import RankingModelInvalid
from crase.models import lambdarank
from crase.models.lambdarank import Group, LambdaRankParams, RankingModel

FEATURES = ("fused_score", "similarity", "neighbour_links")
SHIPPED_MODEL = Path(__file__).resolve().parent / "shipped" / "hepth-pre2003.txt"
# Small trees over monotone features: chosen on the hep-th training ideas (docs/idea.md),
# where larger trees gained nothing.
PARAMS = LambdaRankParams(trees=50, leaves=3, min_data_in_leaf=20, learning_rate=0.1,
                          truncation_level=10, monotone=(1, 1, 1))
# The shipped file is a few KB; anything this large is not a model.
MAX_MODEL_BYTES = 1_000_000


@dataclass(frozen=True)
class FinalOrderModel:
    """A fitted final order, named for the audit (its file's name)."""

    name: str
    ranking: RankingModel

    def scores(self, values: np.ndarray) -> np.ndarray:
        return self.ranking.scores(values)


def feature_rows(fused_scores: Sequence[float], similarities: Sequence[float],
                 neighbour_links: Sequence[int]) -> np.ndarray:
    """The model's rows for a shortlist, one per work, in FEATURES' order: the one place
    both the trainer and the expert build them."""
    columns = (fused_scores, similarities, neighbour_links)
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in columns]
                           ).reshape(len(fused_scores), len(FEATURES))


def fit_final_order(groups: Sequence[Group], name: str) -> FinalOrderModel:
    """The model fit on the shortlists (one group each, 1 for a relevant work)."""
    return FinalOrderModel(name, lambdarank.fit(groups, FEATURES, PARAMS))


def read_final_order(path: Path) -> FinalOrderModel:
    """The model in `path`; RankingModelInvalid, saying what to do, for anything else."""
    try:
        if path.stat().st_size > MAX_MODEL_BYTES:
            raise RankingModelInvalid(f"{path} is over {MAX_MODEL_BYTES} bytes: not a final "
                                      "order model; train one with `crase train-idea-order`")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise RankingModelInvalid(f"cannot read the final order model {path}: {err}: "
                                  "train one with `crase train-idea-order`") from err
    return FinalOrderModel(path.stem, lambdarank.from_text(text, FEATURES, str(path)))


@cache
def final_order_at(path: Path | None) -> FinalOrderModel:
    """The model in `path` (None: the shipped one), read once per process."""
    return read_final_order(path or SHIPPED_MODEL)
