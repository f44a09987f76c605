"""Fixtures for the model client tests: a scripted local chat server and fast settings."""

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from crase.models.chat import ModelLedger, ModelRunner, ReplyCache
from crase.settings import ModelEndpoint
from tests.llm.chat_server import ChatServer

MakeEndpoint = Callable[..., ModelEndpoint]


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer().running() as server:
        yield server


@pytest.fixture
def make_endpoint(chat_server: ChatServer) -> MakeEndpoint:
    """An endpoint on the scripted server with short timeouts and near-zero backoff."""

    def make(**overrides: object) -> ModelEndpoint:
        values: dict[str, object] = {
            "base_url": chat_server.base_url, "model": "test/entail-3b", "timeout_s": 2.0,
            "max_retries": 3, "backoff_base_s": 0.01, "backoff_max_s": 0.05,
            "usd_per_1k_prompt": 0.5, "usd_per_1k_completion": 2.0,
        }
        values.update(overrides)
        return ModelEndpoint.model_validate(values)

    return make


@pytest.fixture
def cache(tmp_path: Path) -> ReplyCache:
    return ReplyCache(tmp_path / "model-cache")


@pytest.fixture
def runner(cache: ReplyCache) -> ModelRunner:
    return ModelRunner(ModelLedger(), cache)

