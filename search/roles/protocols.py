"""What each model role of the search pipeline must provide, whoever serves it.

The offline backends (deterministic, no model server) and the model backends (an
OpenAI-compatible endpoint such as `vllm serve`) both satisfy these protocols, so the
pipeline never knows which one it runs. Every backend has a `name` that is written next
to everything it produced, so an offline result is never mistaken for a model result.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from crase.models.embedding_cache import TextEncoder
from crase.scoring.claims import Claim, PaperText
from crase.settings import ProviderSettings
from crase.usage import Usage


class Planner(Protocol):
    name: str
    usage: Usage

    def plan(self, query: str, count: int) -> list[str]:
        """`count` keyword sub-queries that keep the query's technical terms."""
        ...


class ClaimExtractor(Protocol):
    name: str  # stored on each Claim as `extractor`; claims are reused per (paper, name)
    usage: Usage

    def extract(self, papers: list[PaperText]) -> dict[str, list[Claim]]:
        """4-5 typed claims per paper id; a paper whose extraction failed is left out."""
        ...


class EntailmentScorer(Protocol):
    name: str  # stored on the CITES edge; an edge scored by the same name is never rescored
    version: str
    usage: Usage

    def score(
        self, pairs: list[tuple[list[Claim], list[Claim]]]
    ) -> list[NDArray[np.float64] | None]:
        """For each (citing claims, cited claims) the matrix M[i, j] in [0, 1]: how strongly
        cited claim j grounds citing claim i. None where scoring failed (recorded upstream,
        never replaced by a made-up number)."""
        ...


@dataclass
class SearchBackends:
    """The backend serving each role of one search (chosen in from_settings.py)."""

    planner: Planner
    extractor: ClaimExtractor
    scorer: EntailmentScorer
    # Embeds the query for the vector half of its own search (the paper encoder, or for
    # `crase search` a CachedEncoder around it); None: BM25 only.
    encoder: TextEncoder | None = None
    # Semantic Scholar, for searches with source "semantic-scholar"; None: local only.
    provider: ProviderSettings | None = None
    # The learned order's model file (Settings.models.order_model); None: the shipped model.
    order_model: Path | None = None

    def names(self) -> dict[str, str]:
        return {"planner": self.planner.name, "claims": self.extractor.name,
                "entailment": f"{self.scorer.name}@{self.scorer.version}"}

    def usage(self) -> dict[str, Usage]:
        return {"planner": self.planner.usage, "claims": self.extractor.usage,
                "entailment": self.scorer.usage}
