"""The analyst route's reading of its user text (the query, its plan's details, Neo4j's
messages about it) in time linear in the text: each pattern held the interpreter, and with
it every other route of the server, for seconds on a hostile 20,000-character query."""

import pytest

from crase.api.analyst import check_functions, neo4j_reason, significant_tokens
from tests.interpreter_pauses import measure_pauses

# (reader, text, CPU seconds allowed): each took 2 to 4 s of CPU, in one call, before.
HOSTILE = {
    # QUALIFIED_CALL: a letter run without a call.
    "letters": ("functions", "Z" * 20_000, 0.5),
    # JAVA_CLASS: package-like segments without a class.
    "dotted": ("reason", "._" * 10_000, 0.5),
    # TOKEN: string literals of escapes without their close. Still 20,000 matches that
    # each look ahead to the end (0.4 s), but in 20,000 calls, not one.
    "escapes": ("tokens", '"\\' * 10_000, 1.2),
}
READERS = {"functions": check_functions, "reason": lambda text: neo4j_reason("X", text),
           "tokens": significant_tokens}


@pytest.mark.parametrize(("reader", "text", "cpu_s"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_query_is_read_at_once(reader: str, text: str, cpu_s: float) -> None:
    measured = measure_pauses(lambda: READERS[reader](text))
    assert not isinstance(measured.result, Exception), measured.result
    assert measured.cpu_s < cpu_s
    assert measured.longest_pause_s < 0.5


def test_tokens_and_reasons_read_as_before() -> None:
    # Strings and comments are skipped whole, escaped quotes and all.
    assert significant_tokens("MATCH (p) /* c */ RETURN 'a\\'b', 1.5e3") == [
        ("word", "MATCH"), ("open", "("), ("word", "p"), ("close", ")"), ("word", "RETURN"),
        ("separator", ","), ("number", "1.5e3")]
    reason = neo4j_reason("Neo.X", "Caused by: java.lang.IllegalStateException: bad "
                          "(line 1, column 9 (offset: 8))", prefix=4)
    assert reason == "Neo.X: bad (line 1, column 5 (offset: 4))"
