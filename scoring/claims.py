"""What a claim is, and the paper text claims are drawn from.

Claims are the unit of the Crase method: each paper contributes 4-5 typed atomic claims,
each with the verbatim phrase it comes from, and entailment is scored between the claims
of a citing and a cited paper (crase/scoring/delta.py turns the matrix into Delta).
"""

from dataclasses import dataclass
from typing import Literal

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
