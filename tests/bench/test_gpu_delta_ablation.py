"""The GPU run of the Delta ablation, without a GPU: which roles it gives the model, the
bench command it runs, how it reads the server's log, and that it refuses a CPU server."""

from pathlib import Path

import pytest

from crase.bench.gpu_delta_ablation import bench_command, main, model_environment, offload_report
from crase.settings import LocalModelSettings, Settings

LOG = """ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes
load_tensors: offloaded 29/29 layers to GPU
"""


def test_only_claims_and_entailment_go_to_the_model() -> None:
    env = model_environment(Settings(local_model=LocalModelSettings(port=8123)))
    roles = {name.split("__")[1] for name in env if name.count("__") == 2}
    assert roles == {"CLAIMS", "ENTAILMENT"}  # the planner stays offline, as shipped
    assert env["CRASE_MODELS__CLAIMS__BASE_URL"] == "http://127.0.0.1:8123/v1"
    assert env["CRASE_MODELS__ENTAILMENT__MAX_CONCURRENCY"] == "1"
    assert env["CRASE_MODELS__REMEMBER_REJECTED"] == "true"


def test_both_walks_run_on_the_same_queries() -> None:
    command = bench_command(Path("q.jsonl"), Path("out"), 50)
    assert command[command.index("--ablations") + 1] == "weighting"
    # Without --limit the ablation's Delta walk would run on every query of the file.
    assert command[command.index("--limit") + 1] == command[command.index("--subset") + 1]


def test_the_log_says_whether_every_layer_is_on_the_gpu() -> None:
    said, every = offload_report(LOG)
    assert every and said.startswith("Device 0: NVIDIA H100") and "29/29" in said
    assert offload_report(LOG.replace("29/29", "20/29"))[1] is False
    assert offload_report("") == ("no layer offloaded to a GPU", False)


def test_a_cpu_server_is_refused_before_anything_runs(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path))
    monkeypatch.delenv("CRASE_LOCAL_MODEL__GPU_LAYERS", raising=False)
    assert main(["--out", str(tmp_path / "out")]) == 2
    assert "GPU_LAYERS is 0" in capsys.readouterr().err
    assert not (tmp_path / "local-model").exists() and not (tmp_path / "out").exists()
    monkeypatch.setenv("CRASE_LOCAL_MODEL__GPU_LAYERS", "-1")
    assert main(["--dry-run"]) == 0
    assert "--n_gpu_layers -1" in capsys.readouterr().out
