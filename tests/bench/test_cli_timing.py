"""The command-line timing benchmark's own parts: a child's output kept, its peak memory its
own above the benchmark's floor, and a failing child named with its last line."""

import subprocess
import sys

import pytest

from crase.bench.cli_timing import CommandFailed, run_id_of, run_once


def test_a_childs_output_is_kept_and_its_run_id_read() -> None:
    sample = run_once([sys.executable, "-c", "print('Run 4f2a9c01be77: 10 papers')"])
    assert run_id_of(sample) == "4f2a9c01be77"


def test_a_childs_peak_is_its_own_above_the_benchmarks_floor() -> None:
    # Linux counts what a child inherits at fork into its peak, so the benchmark runs as
    # a small process; here a fresh interpreter stands in for it (the test process is
    # large), and a child that allocates 200 MiB is seen to, a bare one is not.
    measure = ("import sys; from crase.bench.cli_timing import run_once; "
               "bare = run_once([sys.executable, '-c', 'pass']).peak_mib; "
               "big = run_once([sys.executable, '-c', 'b = bytearray(200 << 20)']).peak_mib; "
               "print(bare, big)")
    done = subprocess.run([sys.executable, "-c", measure], capture_output=True, text=True,
                          check=True)
    bare, big = map(float, done.stdout.split())
    assert 1 < bare < 100
    assert big - bare > 150


def test_a_failing_child_is_named_with_its_last_line() -> None:
    with pytest.raises(CommandFailed, match="exited 2: crase: what is wrong; what to do"):
        run_once([sys.executable, "-c",
                  "import sys; print('crase: what is wrong; what to do', file=sys.stderr); "
                  "sys.exit(2)"])
