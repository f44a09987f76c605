"""`crase models ...` without starting a model: the settings it prints configure every
role, a missing model file is a named error, and status says when nothing runs."""

from pathlib import Path

import pytest

from crase.api.cli import main
from crase.errors import LocalModelUnavailable
from crase.models.chat import ROLES
from crase.models.local_server import LocalModelServer, local_model_settings, role_environment
from crase.settings import LocalModelSettings, Settings


def test_the_printed_settings_point_every_role_at_the_local_server(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("CRASE_LOCAL_MODEL__PORT", "8123")
    assert main(["models", "env"]) == 0
    printed = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert printed == role_environment(LocalModelSettings(port=8123))
    for name, value in printed.items():
        monkeypatch.setenv(name, value)
    models = Settings().models
    for role in ROLES:
        endpoint = getattr(models, role)
        assert endpoint.base_url == "http://127.0.0.1:8123/v1"
        assert endpoint.model == "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M"  # the default model
        assert endpoint.response_format == "json_object_schema"
        assert endpoint.max_concurrency == 1 and endpoint.timeout_s == 600
        # Qwen2.5 needs no repetition penalty (it would push it off JSON's brackets).
        assert endpoint.frequency_penalty is None and endpoint.presence_penalty is None
    # The same endpoints as the ones the benchmark builds in code.
    assert local_model_settings(Settings().models, LocalModelSettings(port=8123)) == models


def test_a_model_is_chosen_by_name(monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path))
    assert main(["models", "env", "--model", "smollm2-135m"]) == 0
    printed = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert printed["CRASE_MODELS__CLAIMS__MODEL"] == "SmolLM2-135M-Instruct-Q4_1"
    assert printed["CRASE_MODELS__CLAIMS__FREQUENCY_PENALTY"] == "1"
    monkeypatch.setenv("CRASE_LOCAL_MODEL__MODEL", "qwen2.5-coder-0.5b")
    assert main(["models", "env"]) == 0
    printed = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert printed["CRASE_MODELS__PLANNER__MODEL"] == "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M"
    assert main(["models", "serve", "--model", "qwen2.5-72b"]) == 2
    assert "invalid choice: 'qwen2.5-72b'" in capsys.readouterr().err


def test_status_says_nothing_runs(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path))
    assert main(["models", "status"]) == 1
    assert "not running" in capsys.readouterr().out
    assert main(["models", "stop"]) == 0
    assert "no local model server" in capsys.readouterr().out


def test_a_configured_model_file_that_is_missing_is_refused(tmp_path: Path) -> None:
    settings = Settings(var_dir=tmp_path,
                        local_model=LocalModelSettings(model_path=tmp_path / "none.gguf"))
    with pytest.raises(LocalModelUnavailable, match="CRASE_LOCAL_MODEL__MODEL_PATH"):
        LocalModelServer(settings).model_path()


def test_a_stale_pid_file_is_not_a_running_server(tmp_path: Path) -> None:
    server = LocalModelServer(Settings(var_dir=tmp_path))
    server.home.mkdir(parents=True)
    server.pid_file.write_text("1")  # pid 1 is alive, but it is no llama.cpp server
    assert not server.status().running
    assert server.stop() is False and not server.pid_file.exists()


def test_layers_go_to_the_gpu_only_when_the_setting_asks(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"

    def command(**local: int) -> list[str]:
        settings = Settings(var_dir=tmp_path, local_model=LocalModelSettings(**local))
        return LocalModelServer(settings).command(model)

    cpu = command()
    assert "--n_gpu_layers" not in cpu  # the CPU command stays as it was
    assert cpu[cpu.index("--n_threads") + 1] == "2"
    for layers in (-1, 12):
        assert command(gpu_layers=layers) == [*cpu, "--n_gpu_layers", str(layers)]
    with pytest.raises(ValueError):
        LocalModelSettings(gpu_layers=-2)
