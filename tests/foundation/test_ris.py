"""crase/ris.py: RIS read line by line in time linear in its length, wrapped values too
(each wrapped line was added to the stored value by copying it: quadratic, stopped by the
3 s CPU deadline on a megabyte)."""

import time

from crase.ris import MAX_RIS_CHARS, read_ris


def test_wrapped_values_are_joined_with_one_space_each() -> None:
    text = ("TY  - JOUR\nTI  - A title\n  wrapped once\nand twice\nAU  - One, A.\n"
            "AB  - An abstract\n  on two lines\nER  - \n")
    [record] = read_ris(text)
    assert record.fields == {"TY": ["JOUR"], "TI": ["A title wrapped once and twice"],
                             "AU": ["One, A."], "AB": ["An abstract on two lines"]}


def test_a_megabyte_of_wrapped_lines_is_read_in_linear_time() -> None:
    lines = (MAX_RIS_CHARS - 100) // 4
    text = "TY  - JOUR\nAB  - start\n" + "abc\n" * lines + "ER  - \n"
    assert len(text) <= MAX_RIS_CHARS
    started = time.thread_time()
    [record] = read_ris(text)
    seconds = time.thread_time() - started
    assert record.fields["AB"][0] == "start" + " abc" * lines
    assert seconds < 1.0, f"{seconds:.2f} s of CPU for {lines:,} wrapped lines"
