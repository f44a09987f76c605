"""The code extractor's rules and diagnostics on documents built to stall them: each is read
in time linear in its length, without holding the interpreter (a server's other threads wait
meanwhile), and a CPU deadline is checked at every line, not every thousandth."""

import pytest

from crase.errors import ParseDeadlineExceeded
from crase.research import code_extractor
from crase.research.code_extractor import Document, diagnose, extract_blocks
from crase.text_limits import CpuDeadline
from tests.interpreter_pauses import measure_pauses

# Documents that held a backtracking pattern for seconds, with the CPU time each took and how
# long it held the interpreter before the patterns ran on RE2 (on a loaded 2-core host).
STALLS = {
    # FENCE: two `\s*` around an empty name; 12 s in one call.
    "fence then spaces": "```" + " " * 60_000 + "!\nx = 1\n",
    # FROM_IMPORT_NAME: `\w*[\w.]*` over a long name; past the 5 s deadline, 1 s per call.
    "from-imports without import": "import os\n" + "\n".join(
        "from " + "a" * 1_900 + ");" for _ in range(990)),
    # CODE_LINE: `\)\s*;?\s*$` over spaces before a letter; 12 s, 12 ms a line.
    "calls then spaces": "import os\n" + "\n".join(
        "a()" + " " * 1_900 + "x" for _ in range(990)),
}


@pytest.mark.parametrize("text", list(STALLS.values()), ids=list(STALLS))
def test_a_document_built_to_stall_is_read_at_once(text: str) -> None:
    document = Document("paper.md", "markdown", [text])

    def read() -> None:
        diagnose(document, extract_blocks(document))

    measured = measure_pauses(read)
    assert measured.result is None, measured.result
    assert measured.cpu_s < 1.5
    assert measured.longest_pause_s < 0.25


class CountingDeadline(CpuDeadline):
    """A deadline that counts its checks."""

    checks = 0

    def check(self) -> None:
        CountingDeadline.checks += 1
        super().check()


def test_the_deadline_is_checked_at_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # A check every 1,000 lines let 990 slow lines run 92 s past a 5 s deadline: each of the
    # three rules now checks it at each line it looks at.
    monkeypatch.setattr(code_extractor, "CpuDeadline", CountingDeadline)
    extract_blocks(Document("paper.txt", "text", ["\n".join(["x = 1", "y"] * 500)]))
    assert CountingDeadline.checks >= 3 * 1_000


def test_a_deadline_past_stops_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_extractor, "PARSE_CPU_S", 0.0)
    document = Document("paper.txt", "text", ["x = 1\n" * 100_000])
    with pytest.raises(ParseDeadlineExceeded, match="the code and pseudocode of paper.txt"):
        extract_blocks(document)


def test_the_rules_still_find_fences_headings_and_code() -> None:
    text = "\n".join(["Intro.", "```python", "def f():", "    return 1", "```",
                      "Algorithm 2 Search", "Input: a graph", "1: for each node do",
                      "2: return x", "", "import os", "x = os.sep", "print(x)", ""])
    blocks = extract_blocks(Document("paper.md", "markdown", [text]))
    assert [(b.kind, b.language, b.where) for b in blocks] == [
        ("code", "python", "lines 2-5"), ("pseudocode", None, "lines 6-9"),
        ("code", "python", "lines 11-13")]
