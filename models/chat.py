"""The client every model role uses: OpenAI chat completions (what `vllm serve` exposes).

One call = one prompt with its inputs. The client renders the prompt, looks for a valid
earlier reply in the cache, else posts it to the role's endpoint (per-endpoint concurrency
limit, timeout, and the retry policy of `crase.http`: 429, 5xx, timeouts and dropped
connections, exponential backoff with jitter, Retry-After honoured), extracts the JSON,
validates it against the prompt's reply model and the call's context check, and on a failed
validation sends the problems back ONCE asking for a corrected reply. What still fails
becomes a ModelFailure: a value, recorded in the ledger, never an invented score. Callers
that prefer an exception call `failure.to_error()`.

A call has an overall deadline (`call_deadline_s`, from its first request: its retries, their
waits and the repair request included; time queued behind the concurrency limit before it
is not), after which it is a ModelFailure of kind "timeout". A batch run inside a run is
stoppable while it waits: ModelRunner asks the run's stop check (crase/run_lifecycle.py)
every STOP_POLL_S, and a cancel or a passed run deadline drops the requests in flight and
raises RunCancelled / RunDeadlineExceeded out of the pipeline.

Every outcome carries the model, the prompt version and its Usage (crase/usage.py); the ledger
sums them per stage and per (model, prompt) and serialises to JSON for the Run node.

The async ChatClient lives inside one event loop. Pipelines are synchronous and run in
worker threads; they use ModelRunner, which runs each batch in its own `asyncio.run`.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel

from crase.errors import ModelNotConfigured
from crase.http import RetryPolicy, TryOutcome, send_with_retries
from crase.models.call_outcomes import FailureKind, ModelFailure, ModelReply, Outcome
from crase.models.reply_cache import ReplyCache
from crase.models.reply_json import cut_off_problem, repair_request, validate_reply
from crase.prompts.catalog import Message, Prompt
from crase.prompts.reply_schemas import steering_schema
from crase.run_lifecycle import StopCheck, current_stop_check
from crase.settings import ModelEndpoint, ModelSettings
from crase.usage import ModelLedger, Usage

log = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)
T = TypeVar("T")
# How often a waiting batch asks whether its run must stop: a cancel ends it within this.
STOP_POLL_S = 0.25

REPLY_EXCERPT_CHARS = 2000
ROLES: tuple[str, ...] = tuple(
    name for name, info in ModelSettings.model_fields.items() if info.annotation is ModelEndpoint
)


@dataclass(frozen=True)
class ModelCall(Generic[R]):
    """One prompt with its inputs, and the check its reply must pass in this context."""

    prompt: Prompt
    inputs: dict[str, str | int | float]
    subject: str = ""  # what the call is about (paper id, edge u->v), for the record
    stage: str = ""  # ledger bucket; the prompt name when empty
    check: Callable[[R], list[str]] | None = None
    # The reply model's JSON schema narrowed to this call (a matrix's exact shape, the
    # supplied ids), sent where the endpoint asks the server to enforce a schema. It only
    # steers generation: the reply is still validated against the model and `check`.
    schema: dict[str, Any] | None = None

    @property
    def stage_name(self) -> str:
        return self.stage or self.prompt.name

    def reply_schema(self) -> dict[str, Any]:
        return self.schema or steering_schema(self.prompt.reply_model)


# --- HTTP -------------------------------------------------------------------------------


def call_usage(meter: Usage, endpoint: ModelEndpoint, *, failed: bool = False,
               repaired: bool = False, cached: bool = False) -> Usage:
    """One call's Usage from what its requests metered (requests, retries, tokens, time):
    priced at the endpoint's rates and counted as one call."""
    cost = (meter.prompt_tokens * endpoint.usd_per_1k_prompt
            + meter.completion_tokens * endpoint.usd_per_1k_completion) / 1000
    return replace(meter, calls=1, made=int(meter.requests > 0), cached=int(cached),
                   repaired=int(repaired), failed=int(failed), cost_usd=cost,
                   models={endpoint.model})


@dataclass(frozen=True)
class _Problem:
    kind: FailureKind
    detail: str


@dataclass(frozen=True)
class _Completion:
    text: str
    cut: bool = False  # the server stopped it at max_tokens (finish_reason "length")


class ChatClient:
    """Async client for one event loop; open it with `async with`."""

    def __init__(self, ledger: ModelLedger, cache: ReplyCache | None = None) -> None:
        self.ledger = ledger
        self.cache = cache
        self._http: httpx.AsyncClient | None = None
        self._limits: dict[tuple[str, str], asyncio.Semaphore] = {}

    async def __aenter__(self) -> "ChatClient":
        self._http = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=32))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def complete_all(
        self, endpoint: ModelEndpoint, calls: Sequence[ModelCall[Any]]
    ) -> list[Outcome]:
        """All calls concurrently (bounded by the endpoint's limit), outcomes in call order."""
        return list(await asyncio.gather(*(self.complete(endpoint, call) for call in calls)))

    async def complete(self, endpoint: ModelEndpoint, call: ModelCall[Any]) -> Outcome:
        if not endpoint.configured:
            raise ModelNotConfigured(f"no endpoint for {call.prompt.ref}: set base_url and model")
        messages = call.prompt.render(call.inputs)
        max_tokens = endpoint.max_tokens or call.prompt.max_tokens
        key = ReplyCache.key(call.prompt, messages, endpoint, max_tokens)
        outcome = self._from_cache(endpoint, call, key)
        if outcome is None:
            outcome = await self._ask(endpoint, call, messages, max_tokens, key)
        outcome.record_in(self.ledger)
        return outcome

    def _from_cache(
        self, endpoint: ModelEndpoint, call: ModelCall[Any], key: str
    ) -> Outcome | None:
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is None:
            return None
        value, problems = validate_reply(call.prompt.reply_model, call.check, cached.content)
        if value is None and cached.rejected:
            # The same request at temperature 0 gets the same reply: the same failure,
            # recorded again without asking.
            return ModelFailure(
                model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
                subject=call.subject, kind="invalid_reply",
                detail="; ".join(problems) + " (remembered from an earlier run)",
                usage=call_usage(Usage(), endpoint, failed=True, cached=True),
                last_reply=cached.content[:REPLY_EXCERPT_CHARS])
        if value is None:
            log.info("cached reply %s no longer passes validation: %s", key, problems)
            return None
        return ModelReply(
            value=value, model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, usage=call_usage(Usage(), endpoint, cached=True),
            cached=True,
        )

    async def _ask(
        self,
        endpoint: ModelEndpoint,
        call: ModelCall[Any],
        messages: list[Message],
        max_tokens: int,
        key: str,
    ) -> Outcome:
        meter = Usage()
        # Never fires until the first request starts it (start_deadline): a call queued
        # behind the endpoint's concurrency limit has not begun yet.
        deadline = asyncio.timeout(None)
        try:
            async with deadline:
                return await self._ask_within(endpoint, call, messages, max_tokens, key,
                                              meter, deadline)
        except TimeoutError:
            if not deadline.expired():
                raise
            detail = (f"no valid reply within the call deadline of "
                      f"{endpoint.call_deadline_s:g}s (after {meter.retries} retries)")
            return self._failure(endpoint, call, meter, "timeout", detail)

    async def _ask_within(
        self,
        endpoint: ModelEndpoint,
        call: ModelCall[Any],
        messages: list[Message],
        max_tokens: int,
        key: str,
        meter: Usage,
        deadline: asyncio.Timeout,
    ) -> Outcome:
        reply_model = call.prompt.reply_model
        schema = (reply_model.__name__, call.reply_schema())
        first = await self._post(endpoint, messages, max_tokens, schema, meter, deadline)
        if isinstance(first, _Problem):
            return self._failure(endpoint, call, meter, first.kind, first.detail)
        content = first.text
        value, problems = validate_reply(reply_model, call.check, content)
        repaired = False
        if value is None:
            # A reply cut at the token limit is broken JSON; saying why asks for a shorter one.
            first_problems = ([cut_off_problem(max_tokens)] if first.cut else []) + problems
            retry = [*messages, {"role": "assistant", "content": content},
                     repair_request(first_problems)]
            second = await self._post(endpoint, retry, max_tokens, schema, meter, deadline)
            if isinstance(second, _Problem):
                detail = f"repair request failed ({second.detail}) after: {first_problems}"
                return self._failure(endpoint, call, meter, second.kind, detail)
            content = second.text
            value, problems = validate_reply(reply_model, call.check, content)
            if value is None:
                problems = ([cut_off_problem(max_tokens)] if second.cut else []) + problems
                detail = "; ".join(problems)
                failure = self._failure(endpoint, call, meter, "invalid_reply", detail, content)
                if self.cache is not None and self.cache.remember_rejected \
                        and endpoint.temperature == 0:
                    self.cache.put_rejected(key, content, failure)
                return failure
            repaired = True
        reply = ModelReply(
            value=value, model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, usage=call_usage(meter, endpoint, repaired=repaired),
            repaired=repaired,
        )
        if self.cache is not None:
            self.cache.put(key, content, reply)
        return reply

    def _failure(
        self,
        endpoint: ModelEndpoint,
        call: ModelCall[Any],
        meter: Usage,
        kind: FailureKind,
        detail: str,
        last_reply: str | None = None,
    ) -> ModelFailure:
        return ModelFailure(
            model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, kind=kind, detail=detail,
            usage=call_usage(meter, endpoint, failed=True),
            last_reply=last_reply[:REPLY_EXCERPT_CHARS] if last_reply is not None else None,
        )

    async def _post(
        self,
        endpoint: ModelEndpoint,
        messages: list[Message],
        max_tokens: int,
        schema: tuple[str, dict[str, Any]],
        meter: Usage,
        deadline: asyncio.Timeout,
    ) -> _Completion | _Problem:
        """The reply text, after retries; or the last problem."""
        assert self._http is not None, "use ChatClient inside `async with`"
        url = f"{str(endpoint.base_url).rstrip('/')}/chat/completions"
        body = request_body(endpoint, messages, max_tokens, schema)
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        limit = self._limit(endpoint)
        http = self._http

        async def send() -> httpx.Response:
            async with limit:
                start_deadline(deadline, endpoint.call_deadline_s)
                meter.requests += 1
                started = time.monotonic()
                try:
                    return await http.post(url, json=body, headers=headers,
                                           timeout=endpoint.timeout_s)
                finally:
                    meter.seconds += time.monotonic() - started

        def count_retry(_outcome: TryOutcome, _wait: float) -> None:
            # Counted as they happen, so a call the deadline ends still says how many.
            meter.retries += 1

        sent = await send_with_retries(send, RetryPolicy.of(endpoint), count_retry)
        result = read_outcome(sent.outcome, endpoint, meter)
        if sent.gave_up and isinstance(result, _Problem):
            return _Problem(result.kind, f"{result.detail} (after {sent.retries} retries)")
        return result

    def _limit(self, endpoint: ModelEndpoint) -> asyncio.Semaphore:
        key = (str(endpoint.base_url), endpoint.model)
        if key not in self._limits:
            self._limits[key] = asyncio.Semaphore(endpoint.max_concurrency)
        return self._limits[key]


def start_deadline(deadline: asyncio.Timeout, seconds: float) -> None:
    """Starts a call's deadline at its first request; later requests leave it as it is."""
    if deadline.when() is None:
        deadline.reschedule(asyncio.get_running_loop().time() + seconds)


def request_body(
    endpoint: ModelEndpoint,
    messages: list[Message],
    max_tokens: int,
    schema: tuple[str, dict[str, Any]],
) -> dict[str, Any]:
    """The chat-completion request; `schema` is the reply's (name, JSON schema)."""
    name, json_schema = schema
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "temperature": endpoint.temperature,
        "max_tokens": max_tokens,
    }
    for penalty in ("frequency_penalty", "presence_penalty"):
        if getattr(endpoint, penalty) is not None:
            body[penalty] = getattr(endpoint, penalty)
    if endpoint.response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif endpoint.response_format == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": json_schema},
        }
    elif endpoint.response_format == "json_object_schema":
        # llama.cpp's servers take the schema inside a json_object request and compile it
        # to a grammar; llama-cpp-python refuses the "json_schema" type.
        body["response_format"] = {"type": "json_object", "schema": json_schema}
    return body


def read_outcome(outcome: TryOutcome, endpoint: ModelEndpoint, meter: Usage
                 ) -> _Completion | _Problem:
    """The reply text of a request's last try, or what went wrong with it."""
    if isinstance(outcome, httpx.TimeoutException):
        return _Problem("timeout", f"no reply within {endpoint.timeout_s}s")
    if isinstance(outcome, httpx.TransportError):
        return _Problem("transport", f"{type(outcome).__name__}: {outcome}")
    return read_completion(outcome, meter)


def read_completion(response: httpx.Response, meter: Usage) -> _Completion | _Problem:
    """The assistant's text of a 200 reply (tokens go to the meter), or what went wrong."""
    status = response.status_code
    if status == 429:
        return _Problem("rate_limited", "429 Too Many Requests")
    if status >= 500:
        return _Problem("server_error", f"{status} {response.text[:200]}")
    if status != 200:
        return _Problem("http_error", f"{status} {response.text[:200]}")
    try:
        data = response.json()
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as err:
        return _Problem("bad_response", f"not a chat completion ({type(err).__name__}: {err})")
    count_tokens(data.get("usage"), meter)
    if not isinstance(content, str):
        return _Problem("bad_response", "the completion has no text content")
    cut = choice.get("finish_reason") == "length"
    if cut:
        log.info("a completion was cut at max_tokens; validation will judge it")
    return _Completion(content, cut)


def count_tokens(usage: object, meter: Usage) -> None:
    if not isinstance(usage, dict):
        meter.usage_missing += 1
        return
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        meter.usage_missing += 1
        return
    meter.prompt_tokens += prompt
    meter.completion_tokens += completion


# --- the synchronous side ---------------------------------------------------------------


class ModelRunner:
    """For synchronous callers (pipelines in worker threads): one `asyncio.run` per batch.

    The ledger and the cache outlive the batches; the HTTP client and the concurrency
    limits live inside one batch. Do not call it from a running event loop.

    While a batch waits it asks `stop_check` (default: the stop check of the run the
    calling thread works on, see crase/run_lifecycle.py) every STOP_POLL_S; what the check
    raises ends the batch, its requests dropped, and goes on up to the pipeline.
    """

    def __init__(self, ledger: ModelLedger | None = None, cache: ReplyCache | None = None,
                 stop_check: StopCheck | None = None) -> None:
        self.ledger = ledger if ledger is not None else ModelLedger()
        self.cache = cache
        self.stop_check = stop_check

    @classmethod
    def from_settings(
        cls, models: ModelSettings, ledger: ModelLedger | None = None
    ) -> "ModelRunner":
        return cls(ledger, ReplyCache.from_settings(models))

    def run(self, endpoint: ModelEndpoint, calls: Sequence[ModelCall[Any]]) -> list[Outcome]:
        if not calls:
            return []
        # Read here, in the caller's thread: the run in progress is the caller's.
        stop_check = self.stop_check or current_stop_check()
        stop_check()
        return asyncio.run(self._run(endpoint, calls, stop_check))

    def run_one(self, endpoint: ModelEndpoint, call: ModelCall[Any]) -> Outcome:
        return self.run(endpoint, [call])[0]

    def skip(self, endpoint: ModelEndpoint, call: ModelCall[Any], reason: str) -> ModelFailure:
        """Record a call that was not sent because its input is missing."""
        failure = ModelFailure(
            model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, kind="missing_input", detail=reason,
            usage=call_usage(Usage(), endpoint, failed=True),
        )
        failure.record_in(self.ledger)
        return failure

    async def _run(self, endpoint: ModelEndpoint, calls: Sequence[ModelCall[Any]],
                   stop_check: StopCheck) -> list[Outcome]:
        async with ChatClient(self.ledger, self.cache) as client:
            return await until_stopped(client.complete_all(endpoint, calls), stop_check)


async def until_stopped(work: Awaitable[T], stop_check: StopCheck,
                        poll_s: float = STOP_POLL_S) -> T:
    """Awaits `work`, calling `stop_check` every `poll_s` while it waits. When the check
    raises, the work is cancelled (requests in flight are dropped) and the error goes up."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=poll_s)
            if done:
                return task.result()
            stop_check()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})


def endpoint_for(models: ModelSettings, role: str) -> ModelEndpoint:
    """The configured endpoint of a role; ModelNotConfigured when it has none."""
    if role not in ROLES:
        raise ModelNotConfigured(f"no model role {role!r}; roles are {list(ROLES)}")
    endpoint: ModelEndpoint = getattr(models, role)
    if not endpoint.configured:
        raise ModelNotConfigured(
            f"model role {role} has no endpoint: set CRASE_MODELS__{role.upper()}__BASE_URL "
            f"and CRASE_MODELS__{role.upper()}__MODEL"
        )
    return endpoint
