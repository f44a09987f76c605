"""crase/text_limits.py: the linear-time engine every pattern over user text runs on, with
Python's meaning of its classes, and the CPU deadline every loop over user text checks."""

import re
import time

import pytest

from crase.errors import ParseDeadlineExceeded
from crase.text_limits import CpuDeadline, compile_linear


def test_classes_keep_their_python_meaning() -> None:
    assert compile_linear(r"\s+").split("a\xa0b\x0bc\u2028d") == ["a", "b", "c", "d"]
    assert compile_linear(r"\w+").findall("naïve café_1") == ["naïve", "café_1"]
    assert compile_linear(r"[\d.]+").findall("٣.5 and 7") == ["٣.5", "7"]
    assert compile_linear(r"\S+").findall(" x\xa0y ") == ["x", "y"]
    assert compile_linear(r"WE SHOW", re.IGNORECASE).search("we show") is not None
    assert compile_linear(r"^b", re.MULTILINE).findall("a\nb") == ["b"]


def test_what_the_engine_cannot_read_is_refused_at_compile_time() -> None:
    with pytest.raises(ValueError, match="VERBOSE"):
        compile_linear(r"a b", re.VERBOSE)
    with pytest.raises(ValueError, match="inside a character class"):
        compile_linear(r"[^\W_]")
    with pytest.raises(Exception, match="invalid perl operator|missing"):
        compile_linear(r"(?<!\\)x")  # look-behind: RE2 has none


def test_a_pattern_that_backtracks_in_python_runs_in_linear_time() -> None:
    # Two adjacent quantifiers over the same characters: quadratic with backtracking.
    pattern = compile_linear(r"^\s*(```)\s*([\w+#.-]*)\s*$")
    started = time.thread_time()
    assert pattern.match("```" + " " * 200_000 + "!") is None
    assert time.thread_time() - started < 0.5


def test_the_deadline_raises_once_its_cpu_time_is_spent() -> None:
    with pytest.raises(ParseDeadlineExceeded, match="the draft took more than its 0 s"):
        CpuDeadline(0.0, "the draft").check()
    deadline = CpuDeadline(60.0, "the draft")
    for _ in range(100_000):
        deadline.check()
