"""How long the `crase` command line takes, as a person at a terminal waits for it: each
command a whole process (interpreter start, imports, settings, driver, the work, exit), one
warm-up run, then --runs timed runs; prints the median wall time and the peak memory.

    python -m crase.bench.cli_timing                     # 3 runs of every command
    python -m crase.bench.cli_timing --runs 5 --query "tachyon condensation"

Commands timed: `crase --help`, a few commands' own --help, `crase search QUERY -k 10` warm
(the same query again: the database's caches and the stored query vector warm) and new (a
query no run has seen: the query and a random word), and `crase show RUN` (the warm
search's run). The searches need a running database with a loaded corpus; like every crase
command they take it from the CRASE_* environment and .env.

Peak memory is each child's (its rusage from os.wait4), the largest of the timed runs. Linux
counts the resident memory a child inherits at fork into its peak, so the figure has this
benchmark's own peak as its floor (printed; about 19 MiB, the benchmark imports almost
nothing for that reason);
`cpu s` is the median of its user and system time, which other work on the machine moves
less than the wall time. The children run with Python's bytecode cache on, as an installed
crase has it, even where the environment turns it off (PYTHONDONTWRITEBYTECODE): the
warm-up writes it. The load average is printed before and after, since other work on a
shared machine moves every figure.
"""

import argparse
import os
import re
import resource
import secrets
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass

from crase.bench.machine_state import load_average

HELP_COMMANDS = (("search", "--help"), ("show", "--help"), ("db", "import", "--help"),
                 ("models", "serve", "--help"))
RUN_LINE = re.compile(r"^Run (\w+):", re.MULTILINE)


@dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float  # user + system: what the command itself used, less moved by other work
    peak_mib: float
    stdout: str


class CommandFailed(Exception):
    pass


def crase_command() -> list[str]:
    """The installed `crase` script beside this interpreter, else the module."""
    script = shutil.which("crase", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "crase.api.cli"]


def child_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items()
            if name != "PYTHONDONTWRITEBYTECODE"}


def run_once(argv: Sequence[str]) -> Sample:
    """One whole process: its wall time, its own peak resident memory, and its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 env=child_environment())
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        if child.returncode != 0:
            last = (err.read().decode(errors="replace").strip().splitlines() or ["no output"])
            raise CommandFailed(f"{' '.join(argv)} exited {child.returncode}: {last[-1]}")
    # ru_maxrss: KiB on Linux
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout)


def time_command(label: str, argvs: Sequence[Sequence[str]], runs: int) -> list[Sample]:
    """argvs[0] is the warm-up, argvs[1:] the timed runs (runs of them); prints one row."""
    samples = [run_once(argv) for argv in argvs[:runs + 1]]
    timed = samples[1:]
    walls = [s.wall_s for s in timed]
    cpu = statistics.median(s.cpu_s for s in timed)
    print(f"{label:<44}{statistics.median(walls):>9.2f}{min(walls):>8.2f}{max(walls):>8.2f}"
          f"{cpu:>8.2f}{max(s.peak_mib for s in timed):>10.0f}", flush=True)
    return samples


def run_id_of(sample: Sample) -> str:
    found = RUN_LINE.search(sample.stdout)
    if found is None:
        raise CommandFailed("the search printed no 'Run <id>:' line")
    return found.group(1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.cli_timing",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up "
                        "(default 3)")
    parser.add_argument("--query", default="black hole entropy",
                        help="the search's query (default \"black hole entropy\")")
    parser.add_argument("-k", type=int, default=10, help="papers per search (default 10)")
    parser.add_argument("--crase", metavar="COMMAND",
                        help="the command line to time, e.g. \"python -P -m crase.api.cli\" "
                             "with PYTHONPATH at another build (default: the crase script "
                             "beside this Python)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs: give at least 1")
    crase = shlex.split(args.crase) if args.crase else crase_command()
    repeat = args.runs + 1
    print(f"{' '.join(crase)}: 1 warm-up, then {args.runs} timed runs per command")
    print(f"load average before: {load_average()}")
    print(f"peak memory floor (this benchmark's own, counted into each child's): "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"{'command':<44}{'median s':>9}{'min s':>8}{'max s':>8}{'cpu s':>8}{'peak MiB':>10}")
    try:
        time_command("crase --help", [[*crase, "--help"]] * repeat, args.runs)
        for words in HELP_COMMANDS:
            time_command(f"crase {' '.join(words)}", [[*crase, *words]] * repeat, args.runs)
        search = [*crase, "search", args.query, "-k", str(args.k)]
        warm = time_command(f"crase search QUERY -k {args.k} (warm)", [search] * repeat,
                            args.runs)
        new = [[*crase, "search", f"{args.query} {secrets.token_hex(3)}", "-k", str(args.k)]
               for _ in range(repeat)]
        time_command(f"crase search NEW-QUERY -k {args.k}", new, args.runs)
        time_command("crase show RUN", [[*crase, "show", run_id_of(warm[-1])]] * repeat,
                     args.runs)
    except CommandFailed as err:
        print(f"cli_timing: {err}; is the database running with a corpus loaded (crase db "
              "start, crase load)?", file=sys.stderr)
        return 1
    finally:
        print(f"load average after: {load_average()}")
    print(f"query: {args.query!r}; new queries add a random word")
    return 0


if __name__ == "__main__":
    sys.exit(main())
