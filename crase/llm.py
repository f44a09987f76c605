"""The client every model role uses: OpenAI chat completions (what `vllm serve` exposes).

One call = one prompt with its inputs. The client renders the prompt, looks for a valid
earlier reply in the cache, else posts it to the role's endpoint (per-endpoint concurrency
limit, timeout, retries with exponential backoff and jitter on 429, 5xx, timeouts and
dropped connections, honouring Retry-After), extracts the JSON, validates it against the
prompt's reply model and the call's context check, and on a failed validation sends the
problems back ONCE asking for a corrected reply. What still fails becomes a ModelFailure:
a value, recorded in the ledger, never an invented score. Callers that prefer an
exception call `failure.to_error()`.

Every outcome carries the model, the prompt version and the tokens it cost; the ModelLedger
sums them per stage and per (model, prompt) and serialises to JSON for the Run node.

The async ChatClient lives inside one event loop. Pipelines are synchronous and run in
worker threads; they use ModelRunner, which runs each batch in its own `asyncio.run`.
"""

import asyncio
import hashlib
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from crase.errors import ModelError, ModelNotConfigured, ModelReplyInvalid
from crase.prompts.catalog import Message, Prompt
from crase.retry_after import retry_after_seconds
from crase.scoring.backends import Usage
from crase.settings import ModelEndpoint, ModelSettings

log = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)

FailureKind = Literal[
    "invalid_reply",  # replied twice, neither reply passed validation
    "timeout",  # no reply within the timeout, also after the retries
    "rate_limited",  # 429 after the retries
    "server_error",  # 5xx after the retries
    "http_error",  # another 4xx: the request itself is wrong, not retried
    "transport",  # connection refused or dropped, also after the retries
    "bad_response",  # 200 but not a chat completion
    "missing_input",  # nothing to send (a paper without text); no request made
]
RETRYABLE: set[FailureKind] = {"timeout", "rate_limited", "server_error", "transport"}
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

    @property
    def stage_name(self) -> str:
        return self.stage or self.prompt.name


@dataclass(frozen=True)
class CallUsage:
    """What one call spent, over all its HTTP requests (retries and the repair included)."""

    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_missing: int = 0  # replies without a usage field: unknown, not zero
    cost_usd: float = 0.0
    seconds: float = 0.0


@dataclass(frozen=True)
class ModelReply(Generic[R]):
    value: R
    model: str
    prompt: str  # name@version
    stage: str
    subject: str
    usage: CallUsage
    repaired: bool = False
    cached: bool = False


@dataclass(frozen=True)
class ModelFailure:
    model: str
    prompt: str
    stage: str
    subject: str
    kind: FailureKind
    detail: str
    usage: CallUsage = field(default_factory=CallUsage)
    last_reply: str | None = None  # excerpt of the rejected reply, for the audit

    def to_error(self) -> ModelError:
        cls = ModelReplyInvalid if self.kind == "invalid_reply" else ModelError
        where = f" for {self.subject}" if self.subject else ""
        return cls(f"{self.model} {self.prompt}{where}: {self.kind}: {self.detail}")

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["usage"] = asdict(self.usage)
        return record


Outcome = ModelReply[Any] | ModelFailure


def reply_value(outcome: ModelReply[R] | ModelFailure) -> R:
    """The validated value, or the failure raised as ModelReplyInvalid / ModelError, for
    callers that cannot go on without it (the failure is already in the ledger)."""
    if isinstance(outcome, ModelFailure):
        raise outcome.to_error()
    return outcome.value


# --- accounting -------------------------------------------------------------------------


@dataclass
class Tally:
    calls: int = 0  # logical calls: one prompt + inputs, however many requests it took
    cached: int = 0
    repaired: int = 0
    failed: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_missing: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def add(self, outcome: Outcome) -> None:
        usage = outcome.usage
        self.calls += 1
        self.cached += int(isinstance(outcome, ModelReply) and outcome.cached)
        self.repaired += int(isinstance(outcome, ModelReply) and outcome.repaired)
        self.failed += int(isinstance(outcome, ModelFailure))
        self.requests += usage.requests
        self.retries += usage.retries
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.usage_missing += usage.usage_missing
        self.cost_usd += usage.cost_usd
        self.seconds += usage.seconds


class ModelLedger:
    """Model spending of one run, per stage and per (model, prompt version); thread-safe."""

    def __init__(self, max_failures_kept: int = 500) -> None:
        self._lock = threading.Lock()
        self._stages: dict[str, Tally] = {}
        self._models: dict[tuple[str, str, str], Tally] = {}
        self._failures: list[dict[str, Any]] = []
        self._failures_dropped = 0
        self._max_failures = max_failures_kept

    def record(self, outcome: Outcome) -> None:
        with self._lock:
            self._stages.setdefault(outcome.stage, Tally()).add(outcome)
            key = (outcome.stage, outcome.model, outcome.prompt)
            self._models.setdefault(key, Tally()).add(outcome)
            if isinstance(outcome, ModelFailure):
                if len(self._failures) < self._max_failures:
                    self._failures.append(outcome.to_record())
                else:
                    self._failures_dropped += 1

    def stage(self, name: str) -> Tally:
        with self._lock:
            return Tally(**asdict(self._stages.get(name, Tally())))

    def totals(self) -> Tally:
        total = Tally()
        with self._lock:
            for tally in self._stages.values():
                for key, value in asdict(tally).items():
                    setattr(total, key, getattr(total, key) + value)
        return total

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-serialisable: totals, per stage, per model and prompt, failures."""
        totals = asdict(self.totals())
        with self._lock:
            return {
                "totals": totals,
                "stages": {name: asdict(tally) for name, tally in sorted(self._stages.items())},
                "models": [
                    {"stage": stage, "model": model, "prompt": prompt, **asdict(tally)}
                    for (stage, model, prompt), tally in sorted(self._models.items())
                ],
                "failures": list(self._failures),
                "failures_dropped": self._failures_dropped,
            }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def to_properties(self) -> dict[str, int | float | str | list[str]]:
        """Flat values a Neo4j node can hold (no nested maps); the full ledger as JSON."""
        totals = self.totals()
        with self._lock:
            keys = sorted(self._models)
        return {
            "model_calls": totals.calls,
            "model_calls_cached": totals.cached,
            "model_calls_repaired": totals.repaired,
            "model_calls_failed": totals.failed,
            "model_requests": totals.requests,
            "model_prompt_tokens": totals.prompt_tokens,
            "model_completion_tokens": totals.completion_tokens,
            "model_usage_missing": totals.usage_missing,
            "model_cost_usd": round(totals.cost_usd, 6),
            "model_names": sorted({model for _, model, _ in keys}),
            "prompt_versions": sorted({prompt for _, _, prompt in keys}),
            "model_ledger": self.to_json(),
        }


def add_to_usage(usage: Usage, outcome: Outcome) -> None:
    """Fold one outcome into a backend's Usage: a cache hit is planned but not made."""
    spent = outcome.usage
    usage.calls_planned += 1
    usage.calls_made += int(spent.requests > 0)
    usage.calls_failed += int(isinstance(outcome, ModelFailure))
    usage.prompt_tokens += spent.prompt_tokens
    usage.completion_tokens += spent.completion_tokens
    usage.cost_usd += spent.cost_usd
    usage.models.add(outcome.model)


# --- cache ------------------------------------------------------------------------------


class ReplyCache:
    """Valid replies on disk, one JSON file per sha256 key; only valid replies are stored,
    and a stored reply is validated again when read, so a changed check never reuses a
    reply it would now reject."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def key(
        prompt: Prompt, messages: list[Message], endpoint: ModelEndpoint, max_tokens: int
    ) -> str:
        material = {
            "prompt": prompt.name,
            "version": prompt.version,
            "messages": messages,
            "model": endpoint.model,
            "temperature": endpoint.temperature,
            "max_tokens": max_tokens,
            "response_format": endpoint.response_format,
        }
        encoded = json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(encoded).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        """The stored reply text, or None when absent or unreadable."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            log.warning("ignoring unreadable cache entry %s: %s", key, err)
            return None
        content = entry.get("content") if isinstance(entry, dict) else None
        return content if isinstance(content, str) else None

    def put(self, key: str, content: str, reply: "ModelReply[Any]") -> None:
        entry = {
            "content": content,
            "model": reply.model,
            "prompt": reply.prompt,
            "usage": asdict(reply.usage),
            "stored": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        path = self.path(key)
        partial = path.with_suffix(f".{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
            partial.replace(path)  # atomic: a reader never sees half a file
        except OSError as err:
            # The cache only saves money; a full disk must not fail a valid call.
            log.warning("could not store cache entry %s: %s", key, err)


# --- reply parsing ----------------------------------------------------------------------

THINK_BLOCK = re.compile(r"<think>.*?</think>", flags=re.DOTALL | re.IGNORECASE)
FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?\s*```$", flags=re.DOTALL)


def extract_json_text(content: str) -> str:
    """The JSON part of a reply: reasoning blocks and code fences removed; when prose
    surrounds a single object, the span from its first `{` to its last `}`."""
    text = THINK_BLOCK.sub("", content).strip()
    fenced = FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith("{") and "{" in text and "}" in text:
        text = text[text.index("{") : text.rindex("}") + 1]
    return text


def validate_reply(
    reply_model: type[R], check: Callable[[R], list[str]] | None, content: str
) -> tuple[R | None, list[str]]:
    """The parsed reply and no problems, or None and what is wrong with it."""
    try:
        value = reply_model.model_validate_json(extract_json_text(content), strict=True)
    except ValidationError as err:
        return None, describe_validation_error(err)
    problems = check(value) if check is not None else []
    return (None, problems) if problems else (value, [])


def describe_validation_error(err: ValidationError, limit: int = 20) -> list[str]:
    problems = []
    for item in err.errors(include_url=False)[:limit]:
        if item["type"] == "json_invalid":
            problems.append(f"the reply is not valid JSON ({item['msg']})")
            continue
        where = ".".join(str(part) for part in item["loc"]) or "reply"
        problems.append(f"{where}: {item['msg']}")
    return problems


def repair_request(problems: list[str]) -> Message:
    listed = "\n".join(f"- {problem}" for problem in problems)
    return {
        "role": "user",
        "content": "Your reply could not be accepted:\n"
        f"{listed}\n"
        "Reply again with only the corrected JSON object, in the schema asked for above, "
        "and nothing before or after it.",
    }


# --- HTTP -------------------------------------------------------------------------------


@dataclass
class _Meter:
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_missing: int = 0
    seconds: float = 0.0

    def spent(self, endpoint: ModelEndpoint) -> CallUsage:
        cost = (
            self.prompt_tokens * endpoint.usd_per_1k_prompt
            + self.completion_tokens * endpoint.usd_per_1k_completion
        ) / 1000
        return CallUsage(
            requests=self.requests, retries=self.retries, prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens, usage_missing=self.usage_missing,
            cost_usd=cost, seconds=self.seconds,
        )


@dataclass(frozen=True)
class _Problem:
    kind: FailureKind
    detail: str
    retry_after_s: float | None = None


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
        self.ledger.record(outcome)
        return outcome

    def _from_cache(
        self, endpoint: ModelEndpoint, call: ModelCall[Any], key: str
    ) -> Outcome | None:
        content = self.cache.get(key) if self.cache is not None else None
        if content is None:
            return None
        value, problems = validate_reply(call.prompt.reply_model, call.check, content)
        if value is None:
            log.info("cached reply %s no longer passes validation: %s", key, problems)
            return None
        return ModelReply(
            value=value, model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, usage=CallUsage(), cached=True,
        )

    async def _ask(
        self,
        endpoint: ModelEndpoint,
        call: ModelCall[Any],
        messages: list[Message],
        max_tokens: int,
        key: str,
    ) -> Outcome:
        meter = _Meter()
        reply_model = call.prompt.reply_model
        content = await self._post(endpoint, messages, max_tokens, reply_model, meter)
        if isinstance(content, _Problem):
            return self._failure(endpoint, call, meter, content.kind, content.detail)
        value, problems = validate_reply(reply_model, call.check, content)
        repaired = False
        if value is None:
            first_problems = problems
            retry = [*messages, {"role": "assistant", "content": content}, repair_request(problems)]
            content = await self._post(endpoint, retry, max_tokens, reply_model, meter)
            if isinstance(content, _Problem):
                detail = f"repair request failed ({content.detail}) after: {first_problems}"
                return self._failure(endpoint, call, meter, content.kind, detail)
            value, problems = validate_reply(reply_model, call.check, content)
            if value is None:
                detail = "; ".join(problems)
                return self._failure(endpoint, call, meter, "invalid_reply", detail, content)
            repaired = True
        reply = ModelReply(
            value=value, model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, usage=meter.spent(endpoint), repaired=repaired,
        )
        if self.cache is not None:
            self.cache.put(key, content, reply)
        return reply

    def _failure(
        self,
        endpoint: ModelEndpoint,
        call: ModelCall[Any],
        meter: _Meter,
        kind: FailureKind,
        detail: str,
        last_reply: str | None = None,
    ) -> ModelFailure:
        return ModelFailure(
            model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, kind=kind, detail=detail, usage=meter.spent(endpoint),
            last_reply=last_reply[:REPLY_EXCERPT_CHARS] if last_reply is not None else None,
        )

    async def _post(
        self,
        endpoint: ModelEndpoint,
        messages: list[Message],
        max_tokens: int,
        reply_model: type[BaseModel],
        meter: _Meter,
    ) -> str | _Problem:
        """The reply text, after retries; or the last problem."""
        assert self._http is not None, "use ChatClient inside `async with`"
        url = f"{str(endpoint.base_url).rstrip('/')}/chat/completions"
        body = request_body(endpoint, messages, max_tokens, reply_model)
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        limit = self._limit(endpoint)
        attempt = 0
        while True:
            async with limit:
                meter.requests += 1
                started = time.monotonic()
                try:
                    response = await self._http.post(
                        url, json=body, headers=headers, timeout=endpoint.timeout_s
                    )
                except httpx.TimeoutException:
                    result: str | _Problem = _Problem(
                        "timeout", f"no reply within {endpoint.timeout_s}s"
                    )
                except httpx.TransportError as err:
                    result = _Problem("transport", f"{type(err).__name__}: {err}")
                else:
                    result = read_completion(response, meter)
                meter.seconds += time.monotonic() - started
            if isinstance(result, str) or result.kind not in RETRYABLE:
                return result
            if attempt >= endpoint.max_retries:
                return _Problem(result.kind, f"{result.detail} (after {attempt} retries)")
            await asyncio.sleep(backoff_delay(endpoint, attempt, result.retry_after_s))
            attempt += 1
            meter.retries += 1

    def _limit(self, endpoint: ModelEndpoint) -> asyncio.Semaphore:
        key = (str(endpoint.base_url), endpoint.model)
        if key not in self._limits:
            self._limits[key] = asyncio.Semaphore(endpoint.max_concurrency)
        return self._limits[key]


def request_body(
    endpoint: ModelEndpoint,
    messages: list[Message],
    max_tokens: int,
    reply_model: type[BaseModel],
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": messages,
        "temperature": endpoint.temperature,
        "max_tokens": max_tokens,
    }
    if endpoint.response_format == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif endpoint.response_format == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": reply_model.__name__,
                "schema": reply_model.model_json_schema(),
            },
        }
    return body


def read_completion(response: httpx.Response, meter: _Meter) -> str | _Problem:
    """The assistant's text of a 200 reply (tokens go to the meter), or what went wrong."""
    status = response.status_code
    if status == 429:
        return _Problem("rate_limited", "429 Too Many Requests", retry_after(response))
    if status >= 500:
        return _Problem("server_error", f"{status} {response.text[:200]}", retry_after(response))
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
    if choice.get("finish_reason") == "length":
        log.info("a completion was cut at max_tokens; validation will judge it")
    return content


def count_tokens(usage: object, meter: _Meter) -> None:
    if not isinstance(usage, dict):
        meter.usage_missing += 1
        return
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        meter.usage_missing += 1
        return
    meter.prompt_tokens += prompt
    meter.completion_tokens += completion


def retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds, at least 0; None when absent or unreadable."""
    seconds = retry_after_seconds(response.headers.get("retry-after"))
    return None if seconds is None else max(0.0, seconds)


def backoff_delay(endpoint: ModelEndpoint, attempt: int, server_hint: float | None) -> float:
    """Exponential backoff with jitter; a server's Retry-After is a lower bound. Both are
    capped at backoff_max_s, so a server asking for an hour cannot stall a run."""
    computed = endpoint.backoff_base_s * (2.0**attempt) * random.uniform(0.5, 1.0)
    wanted = max(computed, server_hint or 0.0)
    return min(wanted, endpoint.backoff_max_s)


# --- the synchronous side ---------------------------------------------------------------


class ModelRunner:
    """For synchronous callers (pipelines in worker threads): one `asyncio.run` per batch.

    The ledger and the cache outlive the batches; the HTTP client and the concurrency
    limits live inside one batch. Do not call it from a running event loop.
    """

    def __init__(self, ledger: ModelLedger | None = None, cache: ReplyCache | None = None) -> None:
        self.ledger = ledger if ledger is not None else ModelLedger()
        self.cache = cache

    @classmethod
    def from_settings(
        cls, models: ModelSettings, ledger: ModelLedger | None = None
    ) -> "ModelRunner":
        cache = ReplyCache(models.cache_dir) if models.cache_enabled else None
        return cls(ledger, cache)

    def run(self, endpoint: ModelEndpoint, calls: Sequence[ModelCall[Any]]) -> list[Outcome]:
        if not calls:
            return []
        return asyncio.run(self._run(endpoint, calls))

    def run_one(self, endpoint: ModelEndpoint, call: ModelCall[Any]) -> Outcome:
        return self.run(endpoint, [call])[0]

    def skip(self, endpoint: ModelEndpoint, call: ModelCall[Any], reason: str) -> ModelFailure:
        """Record a call that was not sent because its input is missing."""
        failure = ModelFailure(
            model=endpoint.model, prompt=call.prompt.ref, stage=call.stage_name,
            subject=call.subject, kind="missing_input", detail=reason,
        )
        self.ledger.record(failure)
        return failure

    async def _run(self, endpoint: ModelEndpoint, calls: Sequence[ModelCall[Any]]) -> list[Outcome]:
        async with ChatClient(self.ledger, self.cache) as client:
            return await client.complete_all(endpoint, calls)


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
