"""The search roles served by a model endpoint: planner, claim extractor, entailment scorer.

Each satisfies its protocol in `scoring.backends` and is named
`model:<model>:<prompt>@<version>` (the entailment scorer as name `model:<model>:<prompt>`
plus `version`, the two fields a CITES edge stores), so a stored claim or edge score says
which model and which prompt version produced it. A call that fails (transport, or a
reply that is still invalid after the repair retry) yields no result: the paper is left
out, the matrix is None, the plan raises; the failure is in the ledger and in
`usage.failed`.
Nothing is ever filled in with a made-up value.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from crase.models.chat import (
    ROLES,
    ModelCall,
    ModelFailure,
    ModelRunner,
    Outcome,
)
from crase.prompts.catalog import Prompt, data_block, load_prompt
from crase.prompts.replies import (
    ClaimsReply,
    EntailmentReply,
    PlanReply,
    check_claims,
    check_entailment,
    check_plan,
)
from crase.prompts.reply_schemas import claims_schema, entailment_schema, plan_schema
from crase.scoring.claims import Claim, PaperText
from crase.search.roles.offline_claims import split_sentences
from crase.settings import ModelEndpoint, Settings
from crase.usage import ModelLedger, Usage

MIN_CLAIMS, MAX_CLAIMS = 4, 5
QUOTE_OR_BACKSLASH = re.compile(r'["\\]')


def backend_name(endpoint: ModelEndpoint, prompt: Prompt) -> str:
    return f"model:{endpoint.model}:{prompt.ref}"


def model_roles_configured(settings: Settings) -> dict[str, bool]:
    """For each model role: does it have an endpoint (base URL and model name)?"""
    return {role: getattr(settings.models, role).configured for role in ROLES}


class ModelPlanner:
    def __init__(self, endpoint: ModelEndpoint, runner: ModelRunner) -> None:
        self.endpoint = endpoint
        self.runner = runner
        self.prompt = load_prompt("plan_queries")
        self.name = backend_name(endpoint, self.prompt)
        self.usage = Usage()

    def plan(self, query: str, count: int) -> list[str]:
        """`count` keyword sub-queries; raises ModelError / ModelReplyInvalid on failure
        (a search cannot go on without a plan, and an invented one would mislead)."""
        call: ModelCall[PlanReply] = ModelCall(
            self.prompt, {"query": data_block(query), "count": count},
            subject=query[:120], stage="plan", check=partial(check_plan, count=count),
            schema=plan_schema(count),
        )
        outcome = self.runner.run_one(self.endpoint, call)
        self.usage.add(outcome.usage)
        if isinstance(outcome, ModelFailure):
            raise outcome.to_error()
        return list(outcome.value.queries)


class ModelClaimExtractor:
    def __init__(self, endpoint: ModelEndpoint, runner: ModelRunner) -> None:
        self.endpoint = endpoint
        self.runner = runner
        self.prompt = load_prompt("extract_claims")
        self.name = backend_name(endpoint, self.prompt)
        self.usage = Usage()

    def extract(self, papers: list[PaperText]) -> dict[str, list[Claim]]:
        """4-5 typed claims per paper id (1-5 for a text of fewer than 4 sentences);
        papers without text or whose extraction failed are left out (and counted as
        failed)."""
        sent: list[PaperText] = []
        calls: list[ModelCall[ClaimsReply]] = []
        for paper in papers:
            call = self._call(paper)
            if call is None:
                bare: ModelCall[ClaimsReply] = ModelCall(
                    self.prompt, {}, subject=paper.id, stage="claims"
                )
                self.usage.add(self.runner.skip(self.endpoint, bare, "no text").usage)
                continue
            sent.append(paper)
            calls.append(call)
        claims: dict[str, list[Claim]] = {}
        for paper, outcome in zip(sent, self.runner.run(self.endpoint, calls), strict=True):
            self.usage.add(outcome.usage)
            if not isinstance(outcome, ModelFailure):
                claims[paper.id] = [
                    Claim(text=item.text, type=item.type, source_phrase=item.source_phrase)
                    for item in outcome.value.claims
                ]
        return claims

    def _call(self, paper: PaperText) -> ModelCall[ClaimsReply] | None:
        if not (paper.abstract.strip() or paper.intro.strip()):
            return None
        fields = paper_fields(paper, self.endpoint.max_input_chars)
        source = "\n".join(fields.values())
        least = fewest_claims(fields)
        return ModelCall(
            self.prompt,
            {"paper": data_block(fields), "min_claims": least, "max_claims": MAX_CLAIMS},
            subject=paper.id, stage="claims",
            check=partial(
                check_claims, source_text=source, min_claims=least, max_claims=MAX_CLAIMS
            ),
            schema=claims_schema(least, MAX_CLAIMS, source_spans(fields.values())),
        )


def fewest_claims(fields: dict[str, str]) -> int:
    """MIN_CLAIMS where the abstract and introduction have that many quotable sentences,
    else 1: asked for four claims, or for one a sentence, from a text of one to three
    sentences, Qwen2.5-1.5B wrote one claim two or three times, also when asked again
    (13 of its 17 invalid claim sets on the hep-th validation sample). A short text may
    say one thing; the claims must still differ and quote the text verbatim."""
    body = source_spans([fields["abstract"], fields["introduction"]])
    return MIN_CLAIMS if len(set(body)) >= MIN_CLAIMS else 1


def paper_fields(paper: PaperText, max_chars: int) -> dict[str, str]:
    """Title, abstract and introduction, the introduction cut first to fit `max_chars`."""
    title = paper.title.strip()
    abstract = paper.abstract.strip()[:max_chars]
    room = max(0, max_chars - len(title) - len(abstract))
    return {"title": title, "abstract": abstract, "introduction": paper.intro.strip()[:room]}


def source_spans(texts: Iterable[str], max_chars: int = 300) -> list[str]:
    """Verbatim spans of the paper text that a schema-steered model may quote: its
    sentences, whitespace collapsed (the verbatim check ignores whitespace), split at
    double quotes and backslashes (a grammar literal cannot hold them: llama.cpp's schema
    converter leaves them unescaped and fails on the grammar), each cut at a word to fit a
    source phrase, and at least 3 words long."""
    spans = []
    for text in texts:
        for _, sentence in split_sentences(text):
            for piece in QUOTE_OR_BACKSLASH.split(" ".join(sentence.split())):
                span = piece.strip() if len(piece) <= max_chars else \
                    piece[:max_chars].rsplit(" ", 1)[0].strip()
                if len(span.split()) >= 3:
                    spans.append(span)
    return spans


class ModelEntailmentScorer:
    # The two-class cut on the prompt's own scale (score_entailment: entailment near 1,
    # reasoning around 0.5, unrelated or contradicting near 0): grounded where M reaches
    # it. Fixed by the prompt, not fitted (`crase bench entailment` reads it).
    threshold = 0.5

    def __init__(self, endpoint: ModelEndpoint, runner: ModelRunner) -> None:
        self.endpoint = endpoint
        self.runner = runner
        self.prompt = load_prompt("score_entailment")
        # The edge stores name and version side by side: together model:<m>:<prompt>@<v>.
        self.name = f"model:{endpoint.model}:{self.prompt.name}"
        self.version = self.prompt.version
        self.usage = Usage()

    def score(
        self,
        pairs: list[tuple[list[Claim], list[Claim]]],
        subjects: Sequence[str] | None = None,
    ) -> list[NDArray[np.float64] | None]:
        """One matrix per (citing, cited) pair, None where scoring failed or a side has no
        claims. `subjects` (e.g. "u->v" edge ids) only label the failure records."""
        labels = list(subjects or [f"pair {index}" for index in range(len(pairs))])
        results: list[NDArray[np.float64] | None] = [None] * len(pairs)
        positions: list[int] = []
        calls: list[ModelCall[EntailmentReply]] = []
        for index, (citing, cited) in enumerate(pairs):
            call = entailment_call(self.prompt, citing, cited, labels[index])
            if not citing or not cited:
                skipped = self.runner.skip(self.endpoint, call, "a side has no claims")
                self.usage.add(skipped.usage)
                continue
            positions.append(index)
            calls.append(call)
        for index, outcome in zip(positions, self.runner.run(self.endpoint, calls), strict=True):
            self.usage.add(outcome.usage)
            results[index] = matrix_of(outcome)
        return results


def entailment_call(
    prompt: Prompt, citing: list[Claim], cited: list[Claim], subject: str
) -> ModelCall[EntailmentReply]:
    """The score_entailment call for one edge: citing claims U1.., cited claims V1.., and
    the check that the matrix is len(citing) x len(cited). The prompt's system text holds
    no count and its user text starts with the citing claims, so every edge out of one paper
    shares a prefix that a server caching prompts (llama.cpp) evaluates once."""
    inputs: dict[str, str | int | float] = {
        "citing_claims": data_block(
            [{"id": f"U{i}", "claim": claim.text} for i, claim in enumerate(citing, start=1)]
        ),
        "cited_claims": data_block(
            [{"id": f"V{j}", "claim": claim.text} for j, claim in enumerate(cited, start=1)]
        ),
        "n_citing": len(citing),
        "n_cited": len(cited),
    }
    return ModelCall(
        prompt, inputs, subject=subject, stage="entailment",
        check=partial(check_entailment, n_citing=len(citing), n_cited=len(cited)),
        schema=entailment_schema(len(citing), len(cited)) if citing and cited else None,
    )


def matrix_of(outcome: Outcome) -> NDArray[np.float64] | None:
    if isinstance(outcome, ModelFailure):
        return None
    return np.asarray(outcome.value.matrix, dtype=np.float64)


@dataclass(frozen=True)
class ModelSearchBackends:
    """The model backends of the roles that have an endpoint; None for the others. They
    share one runner, so `ledger` holds every call of the run (per stage, model and prompt
    version, with the failures) for the Run node."""

    planner: ModelPlanner | None
    claims: ModelClaimExtractor | None
    entailment: ModelEntailmentScorer | None
    runner: ModelRunner

    @property
    def ledger(self) -> ModelLedger:
        return self.runner.ledger

    def usage(self) -> Usage:
        total = Usage()
        for backend in (self.planner, self.claims, self.entailment):
            if backend is not None:
                total.add(backend.usage)
        return total


def build_model_backends(settings: Settings, runner: ModelRunner) -> ModelSearchBackends:
    """Model backends for every configured search role, sharing one runner (one ledger)."""
    models = settings.models
    return ModelSearchBackends(
        planner=ModelPlanner(models.planner, runner) if models.planner.configured else None,
        claims=ModelClaimExtractor(models.claims, runner) if models.claims.configured else None,
        entailment=(
            ModelEntailmentScorer(models.entailment, runner)
            if models.entailment.configured
            else None
        ),
        runner=runner,
    )
