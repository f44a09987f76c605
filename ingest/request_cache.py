"""Replies of an external API kept on disk, one file per request, keyed by what the request
asks (its path and parameters, credentials left out): a command interrupted midway and
run again reads what it had already fetched from here and sends only what it had not.

A reply older than `max_age_days` is not used (the request is sent again and the file
replaced); 0 never uses one. Files are written whole or not at all.
"""

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def request_key(path: str, params: Mapping[str, Any]) -> str:
    """The hash that names a request's file: its path and its parameters in sorted order."""
    text = json.dumps([path, sorted((str(k), str(v)) for k, v in params.items())])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RequestCache:
    def __init__(self, folder: Path, max_age_days: float,
                 clock: Any = time.time) -> None:
        self.folder = folder
        self.max_age_s = max_age_days * 86_400
        self.clock = clock

    def file(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored reply, or None when there is none or it is too old to use."""
        path = self.file(key)
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None  # absent, or left half-written by a crash of an older version
        if not isinstance(stored, dict) or self.clock() - float(stored.get("at", 0)) \
                >= self.max_age_s:
            return None
        return stored

    def write(self, key: str, reply: dict[str, Any]) -> None:
        path = self.file(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps({**reply, "at": self.clock()}), encoding="utf-8")
        os.replace(partial, path)
