"""What each model role of the search pipeline must provide, whoever serves it.

The offline backends (deterministic, no model server) and the model backends (an
OpenAI-compatible endpoint such as `vllm serve`) both satisfy these protocols, so the
pipeline never knows which one it runs. Every backend has a `name` that is written next
to everything it produced, so an offline result is never mistaken for a model result.
"""

from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

ClaimType = Literal["CONTEXTUAL", "METHODOLOGICAL", "EMPIRICAL", "THEORETICAL"]


@dataclass(frozen=True)
class PaperText:
    """The text a paper contributes downstream: title + abstract (+ introduction)."""

    id: str
    title: str
    abstract: str = ""
    intro: str = ""


@dataclass(frozen=True)
class Claim:
    text: str
    type: ClaimType
    source_phrase: str  # verbatim span of the paper text the claim comes from


@dataclass
class Usage:
    """Model calls and tokens a backend spent; offline backends report calls only."""

    calls_planned: int = 0
    calls_made: int = 0
    calls_failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    models: set[str] = field(default_factory=set)

    def add(self, other: "Usage") -> None:
        self.calls_planned += other.calls_planned
        self.calls_made += other.calls_made
        self.calls_failed += other.calls_failed
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.models |= other.models


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
