"""Model replies on disk, so a repeated call costs nothing: valid replies, and (only when
asked, at temperature 0) replies that stayed invalid after their repair."""

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crase.models.call_outcomes import ModelFailure, ModelReply
from crase.prompts.catalog import Message, Prompt
from crase.settings import ModelEndpoint, ModelSettings


@dataclass(frozen=True)
class CachedReply:
    content: str
    rejected: bool = False  # stored as a failure: still invalid after its repair

log = logging.getLogger(__name__)


class ReplyCache:
    """Valid replies on disk, one JSON file per sha256 key; only valid replies are stored,
    and a stored reply is validated again when read, so a changed check never reuses a
    reply it would now reject."""

    def __init__(self, directory: Path, remember_rejected: bool = False) -> None:
        self.directory = directory
        self.remember_rejected = remember_rejected

    @classmethod
    def from_settings(cls, models: ModelSettings) -> "ReplyCache | None":
        if not models.cache_enabled:
            return None
        return cls(models.cache_dir, models.remember_rejected)

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
        # Only when set, so the keys of replies stored before these settings stay valid.
        for penalty in ("frequency_penalty", "presence_penalty"):
            if getattr(endpoint, penalty) is not None:
                material[penalty] = getattr(endpoint, penalty)
        encoded = json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(encoded).hexdigest()

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedReply | None:
        """The stored reply, or None when absent or unreadable."""
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            log.warning("ignoring unreadable cache entry %s: %s", key, err)
            return None
        content = entry.get("content") if isinstance(entry, dict) else None
        if not isinstance(content, str):
            return None
        return CachedReply(content, rejected=bool(entry.get("rejected")))

    def put(self, key: str, content: str, reply: ModelReply[Any]) -> None:
        self._write(key, {"content": content, "model": reply.model, "prompt": reply.prompt,
                          "usage": reply.usage.to_dict()})

    def put_rejected(self, key: str, content: str, failure: ModelFailure) -> None:
        """Remember a reply that stayed invalid after its repair (remember_rejected only)."""
        self._write(key, {"content": content, "model": failure.model, "prompt": failure.prompt,
                          "usage": failure.usage.to_dict(), "rejected": failure.detail})

    def _write(self, key: str, entry: dict[str, Any]) -> None:
        entry["stored"] = datetime.now(UTC).isoformat(timespec="seconds")
        path = self.path(key)
        partial = path.with_suffix(f".{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
            partial.replace(path)  # atomic: a reader never sees half a file
        except OSError as err:
            # The cache only saves money; a full disk must not fail a valid call.
            log.warning("could not store cache entry %s: %s", key, err)
