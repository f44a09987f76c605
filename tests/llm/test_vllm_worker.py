"""The in-process vLLM worker: its batching and repair logic against a stand-in engine
with vLLM's `LLM.chat` interface (no GPU or weights here), and the clear error without
vLLM installed."""

import importlib.util
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from crase.errors import ModelWorkerUnavailable
from crase.scoring.claims import Claim
from crase.search.roles.vllm_worker import VllmEntailmentScorer


class StandInEngine:
    """Answers like vllm.LLM.chat: one output per conversation, with token ids."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def chat(self, messages: Any, sampling_params: Any = None, use_tqdm: bool = True) -> Any:
        self.batches.append(len(messages))
        return [self._answer(conversation) for conversation in messages]

    def _answer(self, conversation: list[dict[str, str]]) -> SimpleNamespace:
        user = conversation[1]["content"]
        repairing = len(conversation) > 2
        if "hopeless" in user:
            text = '{"matrix": [[0.5, 0.5]]}'
        elif "fixable" in user and not repairing:
            text = "```json\n{\"matrix\": [[0.5]]"
        else:
            text = '{"matrix": [[0.75], [0.25]]}'
        completion = SimpleNamespace(text=text, token_ids=list(range(12)))
        return SimpleNamespace(prompt_token_ids=list(range(300)), outputs=[completion])


def claims(*texts: str) -> list[Claim]:
    return [Claim(text=text, type="EMPIRICAL", source_phrase=text) for text in texts]


def test_batches_repair_once_and_leave_failures_none() -> None:
    engine = StandInEngine()
    scorer = VllmEntailmentScorer("small/3b", engine=engine)
    pairs = [
        (claims("fine one", "fine two"), claims("cited")),
        (claims("fixable one", "fixable two"), claims("cited")),
        (claims("hopeless one", "hopeless two"), claims("cited")),
        ([], claims("cited")),
    ]
    matrices = scorer.score(pairs, subjects=["a", "b", "c", "d"])

    np.testing.assert_allclose(matrices[0], [[0.75], [0.25]])
    np.testing.assert_allclose(matrices[1], [[0.75], [0.25]])
    assert matrices[2] is None and matrices[3] is None
    assert engine.batches == [3, 2]  # one batch, then one repair batch
    assert (scorer.name, scorer.version) == ("model:small/3b:score_entailment", "2")
    assert scorer.usage.failed == 2 and scorer.usage.prompt_tokens == 5 * 300
    ledger = scorer.ledger.to_dict()
    assert ledger["totals"]["repaired"] == 1
    assert {f["subject"]: f["kind"] for f in ledger["failures"]} == {
        "c": "invalid_reply", "d": "missing_input"}


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed")
def test_without_vllm_the_error_says_what_to_install() -> None:
    with pytest.raises(ModelWorkerUnavailable, match=r"\.\[vllm\]"):
        VllmEntailmentScorer("Qwen/Qwen2.5-3B-Instruct")
