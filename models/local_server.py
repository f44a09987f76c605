"""The local model server: llama.cpp's OpenAI-compatible server (`python -m llama_cpp.server`,
the local-llm extra) on loopback, serving one GGUF file on the CPU, or with its layers on a
GPU (`gpu_layers`, for a llama-cpp-python built with CUDA).

It serves a packaged instruct model chosen by name (models/packaged_models.py): by default
Qwen2.5-Coder-1.5B-Instruct, whose weights install from packages in parts. Its state lives
under `var_dir/local-model/`: the pid file, the server log and the joined model files. It
starts once (a second start reports the running one) and is stopped by its pid only.
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import httpx

from crase import processes
from crase.errors import LocalModelUnavailable
from crase.models.chat import ROLES
from crase.models.packaged_models import (
    PackagedModel,
    assemble,
    assembled,
    install_hint,
    model_file,
    packaged_model,
)
from crase.settings import LocalModelSettings, ModelEndpoint, ModelSettings, Settings

SERVER_MODULE = "llama_cpp.server"
SERVER_DISTRIBUTIONS = ("llama_cpp_python", "uvicorn", "fastapi", "sse_starlette")


@dataclass(frozen=True)
class LocalServerStatus:
    running: bool
    pid: int | None
    base_url: str
    model: str
    log_file: Path


def extra_installed() -> bool:
    """Is the local-llm extra (llama-cpp-python with its server) installed? Answered from
    the distributions' metadata, without importing them."""
    for name in SERVER_DISTRIBUTIONS:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return False
    return True


def served_name(local: LocalModelSettings) -> str:
    """The name the server answers to and every Run records."""
    if local.model_name:
        return local.model_name
    if local.model_path is not None:
        return local.model_path.stem
    return packaged_model(local.model).served_as


def local_endpoint(local: LocalModelSettings) -> ModelEndpoint:
    """The endpoint every role uses on the local server: one request at a time (llama.cpp
    answers them one after another, so more would only wait out their timeout), a long
    per-request timeout for a CPU, the reply schema enforced by its grammar, and the
    model's repetition penalties where it needs them."""
    penalty = None if local.model_path is not None else packaged_model(
        local.model).repeat_penalty
    return ModelEndpoint(
        base_url=f"http://{local.host}:{local.port}/v1", model=served_name(local),
        response_format="json_object_schema", max_concurrency=1,
        frequency_penalty=penalty, presence_penalty=penalty,
        timeout_s=local.request_timeout_s, call_deadline_s=3 * local.request_timeout_s,
    )


def local_model_settings(models: ModelSettings, local: LocalModelSettings) -> ModelSettings:
    """`models` with every role on the local server. Its replies at temperature 0 repeat, so
    a reply that failed validation is remembered too: a warm rerun asks nothing."""
    endpoint = local_endpoint(local)
    return models.model_copy(update={**dict.fromkeys(ROLES, endpoint),
                                     "remember_rejected": True})


def role_environment(local: LocalModelSettings) -> dict[str, str]:
    """The environment variables that give every role the local endpoint."""
    endpoint = local_endpoint(local)
    shown = ("base_url", "model", "response_format", "max_concurrency", "timeout_s",
             "call_deadline_s", "frequency_penalty", "presence_penalty")
    env: dict[str, str] = {}
    for role in ROLES:
        for name in shown:
            value = getattr(endpoint, name)
            if value is None:
                continue
            env[f"CRASE_MODELS__{role.upper()}__{name.upper()}"] = (
                f"{value:g}" if isinstance(value, float) else str(value))
    env["CRASE_MODELS__REMEMBER_REJECTED"] = "true"
    return env


class LocalModelServer:
    """One llama.cpp server process per var_dir, started and stopped by this project."""

    def __init__(self, settings: Settings) -> None:
        self.local = settings.local_model
        self.home = (settings.var_dir / "local-model").resolve()

    @property
    def pid_file(self) -> Path:
        return self.home / "server.pid"

    @property
    def log_file(self) -> Path:
        return self.home / "server.log"

    @property
    def base_url(self) -> str:
        return f"http://{self.local.host}:{self.local.port}/v1"

    @property
    def models_dir(self) -> Path:
        return (self.local.models_dir or self.home / "models").resolve()

    def packaged(self) -> PackagedModel:
        return packaged_model(self.local.model)

    def model_path(self) -> Path:
        """The configured GGUF file, else the packaged model's (joined and checked on first
        use); LocalModelUnavailable says what to install."""
        if self.local.model_path is not None:
            if not self.local.model_path.is_file():
                raise LocalModelUnavailable(
                    f"no model file at {self.local.model_path}: fix CRASE_LOCAL_MODEL__MODEL_PATH "
                    "or unset it to serve a packaged model")
            return self.local.model_path.resolve()
        model = self.packaged()
        if assembled(model, self.models_dir):
            return model_file(model, self.models_dir)
        return self.install()

    def install(self) -> Path:
        """Join the packaged model's parts and check its header (see packaged_models)."""
        return assemble(self.packaged(), self.models_dir)

    @property
    def url_file(self) -> Path:
        return self.home / "server.url"

    def status(self) -> LocalServerStatus:
        """Where the running server listens (as started, whatever the settings say now),
        else where the settings would start it."""
        pid = self._live_pid()
        base_url, model = self.base_url, served_name(self.local)
        if pid is not None and self.url_file.exists():
            base_url, _, model = self.url_file.read_text().strip().partition(" ")
        return LocalServerStatus(pid is not None, pid, base_url, model, self.log_file)

    def start(self) -> LocalServerStatus:
        """Start the server unless this var_dir already runs one; wait until it answers."""
        if self._live_pid() is not None:
            return self.status()
        if not extra_installed():
            raise LocalModelUnavailable(
                "llama-cpp-python's server is not installed: install it with `make local-llm` "
                f"(pip install -e '.[local-llm]'); {install_hint(self.packaged())}")
        command = self.command(self.model_path())
        self.home.mkdir(parents=True, exist_ok=True)
        # Threads that wait sleep instead of spinning: on a shared machine OpenMP's busy
        # wait made one claims call 3.6 times slower (212 s against 58 s, load 15 on 2 cores).
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        process = processes.spawn(command, self.log_file, self.pid_file, env=env)
        self.url_file.write_text(f"{self.base_url} {served_name(self.local)}\n")
        self._wait_until_serving(process)
        return self.status()

    def command(self, model: Path) -> list[str]:
        """The server's command line; `--n_gpu_layers` only where layers go to a GPU, so the
        CPU command stays as it was."""
        gpu = ["--n_gpu_layers", str(self.local.gpu_layers)] if self.local.gpu_layers else []
        return [
            sys.executable, "-m", SERVER_MODULE, "--model", str(model),
            "--model_alias", served_name(self.local), "--host", self.local.host,
            "--port", str(self.local.port), "--n_ctx", str(self.local.context_tokens),
            "--n_threads", str(self.local.threads), "--n_threads_batch", str(self.local.threads),
            *gpu,
        ]

    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop the server this var_dir started (by its pid). False if none ran."""
        return processes.stop(self.pid_file, SERVER_MODULE, timeout_s)

    def _wait_until_serving(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.local.start_timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise LocalModelUnavailable(
                    f"the local model server exited with code {process.returncode}; "
                    f"see {self.log_file}")
            if self._serves_model():
                return
            time.sleep(0.3)
        raise LocalModelUnavailable(
            f"the local model server did not answer within {self.local.start_timeout_s:g} s; "
            f"see {self.log_file} (stop it with `crase models stop`)")

    def _serves_model(self) -> bool:
        try:
            reply = httpx.get(f"{self.base_url}/models", timeout=2.0)
            names = [item.get("id") for item in reply.json().get("data", [])]
        except (httpx.HTTPError, json.JSONDecodeError, AttributeError):
            return False
        return served_name(self.local) in names

    def _live_pid(self) -> int | None:
        return processes.live_pid(self.pid_file, SERVER_MODULE)
