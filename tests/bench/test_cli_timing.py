"""The command-line timing benchmark's own parts: one child measured on its own (its peak
memory from its rusage, its output kept), and a failing child named with its last line."""

import sys

import pytest

from crase.bench.cli_timing import CommandFailed, run_id_of, run_once


def test_a_child_is_measured_alone_and_its_run_id_read() -> None:
    sample = run_once([sys.executable, "-c", "print('Run 4f2a9c01be77: 10 papers')"])
    assert run_id_of(sample) == "4f2a9c01be77"
    assert 1 < sample.peak_mib < 1024  # this child's own peak, in MiB, not the benchmark's


def test_a_failing_child_is_named_with_its_last_line() -> None:
    with pytest.raises(CommandFailed, match="exited 2: crase: what is wrong; what to do"):
        run_once([sys.executable, "-c",
                  "import sys; print('crase: what is wrong; what to do', file=sys.stderr); "
                  "sys.exit(2)"])
