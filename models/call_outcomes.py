"""What one model call comes to: a validated reply (ModelReply) or a failure
(ModelFailure), each with its model, prompt version and Usage. The chat client
(crase.models.chat) makes them and the reply cache (crase.models.reply_cache) stores them;
both import them from here."""

from dataclasses import asdict, dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from crase.errors import ModelError, ModelReplyInvalid
from crase.usage import ModelLedger, Usage

R = TypeVar("R", bound=BaseModel)

FailureKind = Literal[
    "invalid_reply",  # replied twice, neither reply passed validation
    "timeout",  # no reply within the timeout after the retries, or past the call deadline
    "rate_limited",  # 429 after the retries
    "server_error",  # 5xx after the retries
    "http_error",  # another 4xx: the request itself is wrong, not retried
    "transport",  # connection refused or dropped, also after the retries
    "bad_response",  # 200 but not a chat completion
    "missing_input",  # nothing to send (a paper without text); no request made
]


@dataclass(frozen=True)
class ModelReply(Generic[R]):
    value: R
    model: str
    prompt: str  # name@version
    stage: str
    subject: str
    usage: Usage  # this call alone: calls == 1
    repaired: bool = False
    cached: bool = False

    def record_in(self, ledger: ModelLedger) -> None:
        ledger.record(self.stage, self.model, self.prompt, self.usage)


@dataclass(frozen=True)
class ModelFailure:
    model: str
    prompt: str
    stage: str
    subject: str
    kind: FailureKind
    detail: str
    usage: Usage = field(default_factory=Usage)
    last_reply: str | None = None  # excerpt of the rejected reply, for the audit

    def to_error(self) -> ModelError:
        cls = ModelReplyInvalid if self.kind == "invalid_reply" else ModelError
        where = f" for {self.subject}" if self.subject else ""
        return cls(f"{self.model} {self.prompt}{where}: {self.kind}: {self.detail}")

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["usage"] = self.usage.to_dict()
        return record

    def record_in(self, ledger: ModelLedger) -> None:
        ledger.record(self.stage, self.model, self.prompt, self.usage, self.to_record())


Outcome = ModelReply[Any] | ModelFailure


def reply_value(outcome: ModelReply[R] | ModelFailure) -> R:
    """The validated value, or the failure raised as ModelReplyInvalid / ModelError, for
    callers that cannot go on without it (the failure is already in the ledger)."""
    if isinstance(outcome, ModelFailure):
        raise outcome.to_error()
    return outcome.value
