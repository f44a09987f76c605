"""In-process batch entailment with vLLM, for backfilling edge scores on a GPU host.

Install with the `vllm` extra (`pip install -e ".[vllm]"`) on a machine with a GPU and
the model weights. It satisfies the EntailmentScorer protocol with the same prompt, reply
model and checks as the HTTP backend, and the same name and version
(`model:<model>:score_entailment`, the prompt's version), so an edge it scored is not
scored again by a query that uses `vllm serve` with the same model. Replies that fail
validation get one repair round, batched; what still fails is None and a recorded failure.

`vllm` is imported only when a worker is built; without it the error says what to install.
"""

import importlib
import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from crase.errors import ModelWorkerUnavailable
from crase.models.chat import (
    FailureKind,
    ModelCall,
    ModelFailure,
    ModelReply,
    Outcome,
)
from crase.models.reply_json import repair_request, validate_reply
from crase.prompts.catalog import Message, load_prompt
from crase.prompts.replies import EntailmentReply
from crase.scoring.claims import Claim
from crase.search.roles.model import entailment_call, matrix_of
from crase.usage import ModelLedger, Usage


class ChatEngine(Protocol):
    """The part of `vllm.LLM` the worker uses."""

    def chat(self, messages: Any, sampling_params: Any = None, use_tqdm: bool = True) -> Any: ...


def import_vllm() -> Any:
    try:
        return importlib.import_module("vllm")
    except ImportError as err:
        raise ModelWorkerUnavailable(
            "the in-process entailment worker needs vLLM and a GPU: "
            'pip install -e ".[vllm]" on the GPU host, or serve the model with `vllm serve` '
            "and set CRASE_MODELS__ENTAILMENT__BASE_URL instead"
        ) from err


class VllmEntailmentScorer:
    def __init__(
        self,
        model: str,
        *,
        max_tokens: int | None = None,
        max_model_len: int = 4096,
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        engine: ChatEngine | None = None,
        ledger: ModelLedger | None = None,
    ) -> None:
        self.prompt = load_prompt("score_entailment")
        self.model = model
        self.name = f"model:{model}:{self.prompt.name}"
        self.version = self.prompt.version
        self.usage = Usage()
        self.ledger = ledger if ledger is not None else ModelLedger()
        self._sampling: Any = None  # a stand-in engine brings its own defaults
        if engine is None:
            vllm = import_vllm()
            budget = max_tokens or self.prompt.max_tokens
            self._sampling = vllm.SamplingParams(temperature=0.0, max_tokens=budget)
            engine = vllm.LLM(
                model=model, max_model_len=max_model_len,
                tensor_parallel_size=tensor_parallel_size,
                gpu_memory_utilization=gpu_memory_utilization,
            )
        self._engine: ChatEngine = engine

    def score(
        self,
        pairs: list[tuple[list[Claim], list[Claim]]],
        subjects: Sequence[str] | None = None,
    ) -> list[NDArray[np.float64] | None]:
        labels = list(subjects or [f"pair {index}" for index in range(len(pairs))])
        calls = [
            entailment_call(self.prompt, citing, cited, labels[index])
            for index, (citing, cited) in enumerate(pairs)
        ]
        sendable = [index for index, (citing, cited) in enumerate(pairs) if citing and cited]
        outcomes: dict[int, Outcome] = {
            index: self._failure(calls[index], "missing_input", "a side has no claims", [])
            for index in range(len(pairs))
            if index not in sendable
        }
        outcomes.update(self._complete({index: calls[index] for index in sendable}))
        results: list[NDArray[np.float64] | None] = []
        for index in range(len(pairs)):
            outcomes[index].record_in(self.ledger)
            self.usage.add(outcomes[index].usage)
            results.append(matrix_of(outcomes[index]))
        return results

    def _complete(self, calls: dict[int, ModelCall[EntailmentReply]]) -> dict[int, Outcome]:
        """One batch for every call, one batch of repairs for the rejected replies."""
        conversations = {index: call.prompt.render(call.inputs) for index, call in calls.items()}
        spent: dict[int, list[tuple[int, int, float]]] = {index: [] for index in calls}
        replies = self._generate(conversations, spent)
        outcomes: dict[int, Outcome] = {}
        repairs: dict[int, list[Message]] = {}
        for index, text in replies.items():
            value, problems = validate_reply(EntailmentReply, calls[index].check, text)
            if value is not None:
                outcomes[index] = self._reply(calls[index], value, spent[index], repaired=False)
            else:
                assistant: Message = {"role": "assistant", "content": text}
                repairs[index] = [*conversations[index], assistant, repair_request(problems)]
        for index, text in self._generate(repairs, spent).items():
            value, problems = validate_reply(EntailmentReply, calls[index].check, text)
            if value is not None:
                outcomes[index] = self._reply(calls[index], value, spent[index], repaired=True)
            else:
                outcomes[index] = self._failure(
                    calls[index], "invalid_reply", "; ".join(problems), spent[index], text
                )
        return outcomes

    def _generate(
        self,
        conversations: dict[int, list[Message]],
        spent: dict[int, list[tuple[int, int, float]]],
    ) -> dict[int, str]:
        if not conversations:
            return {}
        started = time.monotonic()
        outputs = self._engine.chat(
            list(conversations.values()), sampling_params=self._sampling, use_tqdm=False
        )
        share = (time.monotonic() - started) / len(conversations)
        texts: dict[int, str] = {}
        for index, output in zip(conversations, outputs, strict=True):
            completion = output.outputs[0]
            spent[index].append((len(output.prompt_token_ids), len(completion.token_ids), share))
            texts[index] = completion.text
        return texts

    def _reply(
        self,
        call: ModelCall[EntailmentReply],
        value: EntailmentReply,
        spent: list[tuple[int, int, float]],
        repaired: bool,
    ) -> ModelReply[EntailmentReply]:
        return ModelReply(
            value=value, model=self.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, usage=self._usage(spent, repaired=repaired), repaired=repaired,
        )

    def _failure(
        self,
        call: ModelCall[EntailmentReply],
        kind: FailureKind,
        detail: str,
        spent: list[tuple[int, int, float]],
        last_reply: str | None = None,
    ) -> ModelFailure:
        return ModelFailure(
            model=self.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, kind=kind, detail=detail,
            usage=self._usage(spent, failed=True),
            last_reply=last_reply,
        )


    def _usage(self, spent: list[tuple[int, int, float]], *, failed: bool = False,
               repaired: bool = False) -> Usage:
        """Tokens counted from vLLM's own token ids; a local GPU has no price per token."""
        return Usage(
            calls=1, made=int(bool(spent)), failed=int(failed), repaired=int(repaired),
            requests=len(spent),
            prompt_tokens=sum(prompt for prompt, _, _ in spent),
            completion_tokens=sum(completion for _, completion, _ in spent),
            seconds=sum(seconds for _, _, seconds in spent), models={self.model},
        )
