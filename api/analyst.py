"""Read-only analyst Cypher: the one place where Cypher comes from outside `cypher/`.

The analyst's text is sent as the query and their values as parameters; nothing is ever
spliced into the text. Three layers keep it read-only:

1. The database plans it first (`EXPLAIN`, nothing runs) and the plan is checked: the
   query type must be read-only ('r'); no LOAD CSV (it fetches files and URLs even in read
   mode); no transaction termination or listing (they run in read mode too); procedures
   only from a short allowlist (`gds.graph.drop` and `gds.graph.project` run in read mode
   and would change GDS's in-memory catalog under a running search); no GDS catalog
   function (`gds.graph.project(...)` as an aggregation) or APOC function.
2. It runs in a READ transaction, which Neo4j refuses to let write anything (data, schema,
   users).
3. At most `api.analyst_row_limit` + 1 rows are pulled; the response says whether more
   existed.

And four keep it from starving the rest of the API (what Neo4j 5.26 does with hostile
texts is in tests/api/test_analyst_limits.py):

- **Refused up front with a 400, before anything is sent**: a query over 20,000
  characters, and parameters nested more than 32 levels deep or holding integers past
  64 bits (ValidationFailed); expressions nested more than 100 levels deep (brackets,
  CASEs and chained operators counted together: Neo4j overflows its stack near 200 and
  then never answers), and, anywhere but right after UNWIND, a `range()` whose size is
  not known to be small: a bound from a parameter or arithmetic (`range(1, $n)`,
  `range(1, toInteger(1.5e9))`), or literal ranges of more than 100,000 values together,
  nested ones multiplied; `size(list) - 1` is a known bound (AnalystQueryTooComplex). One
  expression step over a range is not stopped by the timeout: measured with a 1 s
  timeout, a reduce over 2e8 values ran 9.6 s and only then reported the timeout. A result
  nested more than 64 levels deep is refused too. These checks are cheap, not complete (an
  expression that nests loops over lists the query collected is not bounded by them),
  hence the slots below.
- **Transaction timeout**: the plan and the run share `api.analyst_timeout_s` (default
  10 s), sent as the driver's transaction timeout; the database stops a query past it
  (408 AnalystQueryTimeout). Neo4j checks the timeout between rows, and its monitor runs
  every 2 s, so a query may run up to 2 s past it. No retries: a query that failed once
  is not sent again.
- **HTTP deadline**: the answer comes at most `api.analyst_timeout_s +
  api.analyst_grace_s` (default 10 + 5 = 15 s) after the query was accepted; past it,
  504 AnalystQueryUnanswered, while the database may still be working on it.
- **Bounded concurrency**: at most `api.analyst_max_in_flight` (default 2) analyst
  queries are in the database at once; each keeps its slot until the database has
  answered, not only until the HTTP deadline, because a step the timeout cannot stop
  (found: `reduce` over millions of values) keeps a database core busy for as long as it
  runs, which may be until the server restarts. Past the bound: 503 AnalystQueriesBusy
  with Retry-After (the deadline, in seconds). Other routes do not wait on analyst
  queries: each runs in its own thread, and the request thread waits only until the
  deadline.

Errors the database reports (syntax, unknown names, types) are shown to the analyst, who
wrote the query, as Neo4j's code and the first line of its message, with positions
counted in the analyst's text, without Java class names and with internal ids replaced.
"""

import base64
import logging
import math
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from crase.errors import (
    AnalystClientGone,
    AnalystQueriesBusy,
    AnalystQueryInvalid,
    AnalystQueryRefused,
    AnalystQueryTimeout,
    AnalystQueryTooComplex,
    AnalystQueryUnanswered,
    DatabaseAuthFailed,
    DatabaseUnavailable,
    QueryMemoryExceeded,
)
from crase.graph import Graph, auth_failed_message, is_out_of_memory, memory_message
from crase.neo4j_driver import (
    AuthError,
    ClientError,
    Date,
    DateTime,
    Duration,
    Neo4jError,
    Node,
    Path,
    Point,
    Relationship,
    ServiceUnavailable,
    Session,
    SessionExpired,
    Time,
    Transaction,
)
from crase.settings import ApiSettings
from crase.text_limits import LinearMatch, compile_linear

T = TypeVar("T")

MAX_QUERY_CHARS = 20_000
# Neo4j 5.26 overflowed its stack at 180-200 nested lists, maps, CASEs, string `+` terms
# or property lookups (its thresholds move with the JIT); this estimate counts high.
MAX_EXPRESSION_DEPTH = 100
MAX_LITERAL_RANGE = 100_000
MAX_PARAMETER_DEPTH = 32
MAX_RESULT_DEPTH = 64
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
EXPLAIN = "EXPLAIN "
MAX_REASON_CHARS = 500

log = logging.getLogger(__name__)

# Procedures an analyst may CALL: schema introspection, full-text search, GDS catalog listing.
ALLOWED_PROCEDURES = frozenset({
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.info",
    "db.schema.visualization", "db.schema.nodeTypeProperties", "db.schema.relTypeProperties",
    "db.index.fulltext.queryNodes", "db.index.fulltext.queryRelationships",
    "gds.graph.list", "gds.list", "gds.version",
})
# GDS functions that only read; any other gds.* function (the catalog's
# gds.graph.project aggregation above all) is refused, as is every apoc.* function.
ALLOWED_GDS_FUNCTION_PREFIXES = ("gds.util.", "gds.similarity.", "gds.version",
                                 "gds.graph.exists", "gds.isLicensed")
# Plan operators that act outside the data even in a read transaction.
REFUSED_OPERATORS = {
    "LoadCSV": "LOAD CSV reads files and URLs from the database server",
    "TerminateTransactions": "TERMINATE TRANSACTIONS stops other people's work",
    "ShowTransactions": "SHOW TRANSACTIONS shows other people's queries",
    "ShowSettings": "SHOW SETTINGS shows the server configuration",
    "TransactionForeach": "CALL { ... } IN TRANSACTIONS writes in batches",
    "TransactionApply": "CALL { ... } IN TRANSACTIONS writes in batches",
}
QUERY_TYPES = {"w": "writes data", "rw": "writes data", "s": "changes the schema or "
               "administers the server"}
# The analyst's query and Neo4j's messages about it are user text: every pattern runs on
# RE2 (crase.text_limits.compile_linear), linear in the text (a run of 20,000 letters held
# the interpreter for seconds in QUALIFIED_CALL).
QUALIFIED_CALL = compile_linear(
    r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\(")


# Enough of Cypher's lexical grammar to measure nesting: strings, comments and quoted
# names are skipped whole, so brackets inside them do not count.
TOKEN = compile_linear("|".join((
    r"(?P<skip>\s+|//[^\n]*|/\*.*?(?:\*/|\z)"
    r"|'(?:[^'\\]|\\.)*(?:'|\z)|\"(?:[^\"\\]|\\.)*(?:\"|\z)|`[^`]*(?:`|\z))",
    r"(?P<number>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)",
    r"(?P<word>[A-Za-z_][A-Za-z0-9_]*)",
    r"(?P<open>[(\[{])",
    r"(?P<close>[)\]}])",
    r"(?P<separator>[,|;:])",
    r"(?P<operator><>|<=|>=|=~|->|<-|--|\.\.|[-+*/%^=<>.!])",
    r"(?P<other>.)",
)), re.DOTALL)
WORD_OPERATORS = frozenset({"AND", "OR", "XOR", "NOT", "IN", "IS", "STARTS", "ENDS",
                            "CONTAINS"})
# Words after which a new expression starts at the same bracket level.
EXPRESSION_ENDS = frozenset({
    "MATCH", "OPTIONAL", "WHERE", "WITH", "RETURN", "UNWIND", "ORDER", "BY", "SKIP", "LIMIT",
    "CALL", "YIELD", "UNION", "AS", "WHEN", "THEN", "ELSE", "DISTINCT", "SHOW", "USE",
    "FINISH", "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD",
})
POSITION = compile_linear(r"\(line (\d+), column (\d+) \(offset: (\d+)\)\)")
JAVA_CLASS = compile_linear(
    r"(?:Caused by: )?\b(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b:?\s*")
ELEMENT_ID = compile_linear(
    r"\b\d+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+\b")
UUID = compile_linear(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


@dataclass(frozen=True)
class AnalystResult:
    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool
    row_limit: int
    elapsed_ms: float


class AnalystSlots:
    """At most `size` analyst queries in the database at once, each in its own thread.

    A slot is given back when the database has answered (or the connection has failed),
    not at the HTTP deadline: a step the timeout cannot stop keeps a database core busy
    after the client has had its 504, and its slot says so."""

    def __init__(self, size: int, timeout_s: float, grace_s: float) -> None:
        self.size = size
        self.deadline_s = timeout_s + grace_s
        self._free = threading.BoundedSemaphore(size)

    @classmethod
    def from_settings(cls, api: ApiSettings) -> "AnalystSlots":
        return cls(api.analyst_max_in_flight, api.analyst_timeout_s, api.analyst_grace_s)

    def run(self, work: Callable[[], T]) -> T:
        """`work()`'s result, or AnalystQueriesBusy at once, or AnalystQueryUnanswered at
        the deadline."""
        if not self._free.acquire(blocking=False):
            raise AnalystQueriesBusy(
                f"{self.size} of {self.size} analyst query slots are in use "
                "(api.analyst_max_in_flight) by queries the database has not finished; a "
                "query it cannot interrupt keeps its slot until it ends; retry in "
                f"{self.retry_after_s} s", self.retry_after_s)
        answer: Future[T] = Future()
        # A daemon thread: one the database never answers must not hold up a shutdown.
        threading.Thread(target=self._hold, args=(work, answer), daemon=True,
                         name="crase-analyst-query").start()
        try:
            return answer.result(timeout=self.deadline_s)
        except TimeoutError:
            if answer.done():  # the work's own TimeoutError, not the deadline
                raise
            raise AnalystQueryUnanswered(
                f"the database did not answer within {self.deadline_s:g} s "
                "(api.analyst_timeout_s + api.analyst_grace_s); it may still be running the "
                "query, which keeps its analyst slot until it ends; simplify the query, or "
                "UNWIND large lists so that the timeout can stop it") from None

    @property
    def retry_after_s(self) -> int:
        return math.ceil(self.deadline_s)

    def _hold(self, work: Callable[[], T], answer: "Future[T]") -> None:
        started = time.monotonic()
        try:
            answer.set_result(work())
        except Exception as err:  # noqa: BLE001 (the waiting request raises it)
            answer.set_exception(err)
        finally:
            self._free.release()
        took = time.monotonic() - started
        if took > self.deadline_s:
            outcome = answer.exception()
            log.warning("an analyst query held its slot for %.0f s, past the %g s deadline; "
                        "it ended with %s", took, self.deadline_s,
                        f"{type(outcome).__name__}: {outcome}" if outcome else "rows")


def answer_analyst_query(graph: Graph, slots: AnalystSlots, api: ApiSettings, text: str,
                         params: dict[str, Any],
                         stop: "RequestStop | None" = None) -> AnalystResult:
    """Refuse what cannot be answered safely, then run the query in a slot; see the module
    docstring. `stop`: the request's id and whether its client went away."""
    check_text(text)
    return slots.run(lambda: run_analyst_query(graph, text, params, api.analyst_timeout_s,
                                               api.analyst_row_limit, stop))


@dataclass
class RequestStop:
    """One HTTP request's transactions: each carries `request_id` in its metadata, and
    `stop_request` ends them when the client has gone (a query that outlived its client
    held an analyst slot to its timeout)."""

    request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    stopped: threading.Event = field(default_factory=threading.Event)

    @property
    def metadata(self) -> dict[str, str]:
        return {"crase_request": self.request_id}


def stop_request(graph: Graph, stop: RequestStop) -> int:
    """End the transactions of a request whose client went away, and keep it from starting
    another; how many were ended."""
    stop.stopped.set()
    ids = [row["id"] for row in graph.read("read_request_transactions",
                                           request=stop.request_id)]
    if not ids:
        return 0
    ended = graph.write("terminate_transactions", ids=ids)
    log.info("request %s: client gone, %d transactions ended", stop.request_id, len(ended))
    return len(ended)


@dataclass
class Stage:
    """Where the analyst's text starts in the query being sent (after EXPLAIN, or at 0)."""
    prefix: int


def run_analyst_query(graph: Graph, text: str, params: dict[str, Any], timeout_s: float,
                      row_limit: int, stop: RequestStop | None = None) -> AnalystResult:
    """Check the plan, then run the query read-only, both within `timeout_s`; each
    transaction tagged with the request's id, and none begun once its client is gone."""
    started = time.perf_counter()
    stage = Stage(prefix=len(EXPLAIN))
    stop = stop or RequestStop()
    with translated_errors(timeout_s, stage), graph.driver.session(
            database=graph.database, default_access_mode="READ") as session:
        query_type, plan = in_transaction(session, timeout_s, stop, explain, text, params)
        check_plan(query_type, plan)
        stage.prefix = 0
        left = timeout_s - (time.perf_counter() - started)
        if left <= 0:
            raise AnalystQueryTimeout(f"the query ran past {timeout_s:g} s while being planned")
        columns, rows = in_transaction(session, left, stop, fetch_rows, text, params,
                                       row_limit)
    return AnalystResult(columns, rows[:row_limit], len(rows) > row_limit, row_limit,
                         round((time.perf_counter() - started) * 1000, 1))


def in_transaction(session: Session, timeout_s: float, stop: RequestStop,
                   work: Callable[..., T], *args: Any) -> T:
    """`work(tx, *args)` in a read transaction the database stops after `timeout_s`, with
    the request's id in its metadata; none once the request's client is gone."""
    if stop.stopped.is_set():
        raise AnalystClientGone("the client went away before the query ran; nothing was run")
    # An explicit transaction, not execute_read: that would retry a query whose
    # connection failed, and a query that overloaded the database must not run twice.
    with session.begin_transaction(timeout=timeout_s, metadata=stop.metadata) as tx:
        return work(tx, *args)


def explain(tx: Transaction, text: str,
            params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    # Only a keyword is put before the analyst's text; their values stay parameters.
    summary = tx.run(EXPLAIN + text, params).consume()
    return summary.query_type or "", summary.plan or {}


def fetch_rows(tx: Transaction, text: str, params: dict[str, Any],
               row_limit: int) -> tuple[list[str], list[dict[str, Any]]]:
    result = tx.run(text, params)
    columns = list(result.keys())
    records = result.fetch(row_limit + 1)
    return columns, [{key: to_json(value) for key, value in record.items()}
                     for record in records]


# --- what is refused before anything is sent -----------------------------------------------

def check_text(text: str) -> None:
    """Refuse texts Neo4j would choke on, or run without being able to stop them."""
    if len(text) > MAX_QUERY_CHARS:
        raise AnalystQueryTooComplex(f"the query has {len(text)} characters; the limit is "
                                     f"{MAX_QUERY_CHARS}")
    tokens = significant_tokens(text)
    depth = expression_depth(tokens)
    if depth > MAX_EXPRESSION_DEPTH:
        raise AnalystQueryTooComplex(
            f"the query's expressions are nested about {depth} levels deep (brackets, CASEs "
            f"and chained operators); the limit is {MAX_EXPRESSION_DEPTH}, because Neo4j "
            "overflows its stack near 200 and then never answers; split the expression "
            "into WITH steps or lists")
    oversized = oversized_range(tokens)
    if oversized:
        call, count = oversized
        size = (f"makes {count:,} values" if count >= 0 else
                "has a bound that is neither an integer literal nor size(...) of a list, so "
                "its size is not known before it runs, and")
        raise AnalystQueryTooComplex(
            f"{call} {size} that one expression step would go through (ranges nested in "
            "one another multiply), and the database does not stop such a step at the "
            "timeout; UNWIND the range into rows instead (a row loop stops at the timeout), "
            f"or keep the ranges of expressions to at most {MAX_LITERAL_RANGE:,} values")


def significant_tokens(text: str) -> list[tuple[str, str]]:
    return [(match.lastgroup or "other", match.group()) for match in TOKEN.finditer(text)
            if match.lastgroup != "skip"]


def expression_depth(tokens: list[tuple[str, str]]) -> int:
    """An estimate, from above, of the deepest expression tree: each bracket or CASE is a
    level, and each operator makes its expression one deeper (`a + b + c` nests left)."""
    operators = [0]  # in the current expression at each open level
    depth = deepest = 0
    for kind, text in tokens:
        word = text.upper() if kind == "word" else ""
        if kind == "open" or word == "CASE":
            operators.append(0)
            depth += 1
        elif (kind == "close" or word == "END") and len(operators) > 1:
            depth -= 1 + operators.pop()
        elif kind == "operator" or word in WORD_OPERATORS:
            operators[-1] += 1
            depth += 1
        elif kind == "separator" or word in EXPRESSION_ENDS:
            depth -= operators[-1]
            operators[-1] = 0
        deepest = max(deepest, depth)
    return deepest


def oversized_range(tokens: list[tuple[str, str]]) -> tuple[str, int] | None:
    """The first `range(...)` outside UNWIND whose size is not known to be small, as its
    text and its number of values (-1: not known from the text); None if there is none.

    An expression step never looks at the transaction timeout, so a range that one step
    folds (reduce, a list comprehension, any/all, a WITH of the list) must be small: its
    bounds integer literals, or `size(...)` of a list the query already holds (plus or
    minus a literal), and the literal ranges together, nested ones multiplied, at most
    MAX_LITERAL_RANGE values. A bound from a parameter or arithmetic is not known."""
    total = 1
    for at, (kind, text) in enumerate(tokens):
        if (kind != "word" or text.lower() != "range" or at + 1 >= len(tokens)
                or tokens[at + 1][1] != "(" or (at > 0 and tokens[at - 1][1] == ".")):
            continue
        if at > 0 and tokens[at - 1][1].upper() == "UNWIND":
            continue  # a row loop: the timeout stops it
        arguments = call_arguments(tokens, at + 1)
        shown = "range(" + ", ".join("".join(part for _, part in argument)
                                     for argument in arguments) + ")"
        bounds = [literal_integer(argument) for argument in arguments]
        if not 2 <= len(arguments) <= 3 or any(
                bound is None and not bounded_by_size(argument)
                for bound, argument in zip(bounds, arguments, strict=True)):
            return shown, -1
        if all(bound is not None for bound in bounds):
            start, end = bounds[0] or 0, bounds[1] or 0
            step = bounds[2] if len(bounds) == 3 else 1
            count = max(0, (end - start) // step + 1) if step else 0
            total *= max(count, 1)
            if total > MAX_LITERAL_RANGE:
                return shown, count if count > MAX_LITERAL_RANGE else total
    return None


def call_arguments(tokens: list[tuple[str, str]], at: int) -> list[list[tuple[str, str]]]:
    """The arguments of the call whose '(' is `tokens[at]`, each as its tokens (an
    unclosed call: what there is)."""
    arguments: list[list[tuple[str, str]]] = [[]]
    depth = 0
    for token in tokens[at + 1:]:
        kind, text = token
        if kind == "open":
            depth += 1
        elif kind == "close":
            if depth == 0:
                break
            depth -= 1
        if text == "," and depth == 0:
            arguments.append([])
        else:
            arguments[-1].append(token)
    return arguments


def literal_integer(argument: list[tuple[str, str]]) -> int | None:
    """The value of an argument that is one integer literal (with a sign), else None."""
    texts = [text for _, text in argument]
    sign = -1 if texts[:1] == ["-"] else 1
    digits = texts[1:] if texts[:1] in (["-"], ["+"]) else texts
    if len(digits) == 1 and digits[0].isdigit() and len(digits[0]) <= 19:
        return sign * int(digits[0])
    return None


def bounded_by_size(argument: list[tuple[str, str]]) -> bool:
    """Whether an argument is `size(...)`, plus or minus an integer literal: a list the
    query already holds, so no larger than what its rows built within the timeout."""
    texts = [text for _, text in argument]
    if len(texts) < 3 or texts[0].lower() != "size" or texts[1] != "(":
        return False
    depth = 0
    for end, text in enumerate(texts[1:], start=1):
        depth += {"(": 1, ")": -1}.get(text, 0)
        if depth == 0:
            rest = texts[end + 1:]
            return not rest or (len(rest) == 2 and rest[0] in "+-" and rest[1].isdigit())
    return False


def parameter_problem(params: dict[str, Any]) -> str | None:
    """Why Neo4j cannot take these parameters (values nested more than
    MAX_PARAMETER_DEPTH deep, integers past 64 bits), or None. A loop, not recursion, so
    that a deep value cannot overflow the check itself."""
    pending: list[tuple[str, Any, int]] = [(f"${key}", value, 1)
                                           for key, value in params.items()]
    while pending:
        path, value, depth = pending.pop()
        if depth > MAX_PARAMETER_DEPTH:
            return (f"{path}: nested more than {MAX_PARAMETER_DEPTH} levels deep; send "
                    "flatter values")
        if isinstance(value, int) and not isinstance(value, bool) \
                and not INT64_MIN <= value <= INT64_MAX:
            return (f"{path}: an integer outside the 64-bit range Neo4j stores "
                    "(-2^63 to 2^63 - 1); send it as a string or a float")
        if isinstance(value, dict):
            pending.extend((f"{path}.{key}", item, depth + 1) for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((f"{path}[{i}]", item, depth + 1) for i, item in enumerate(value))
    return None


# --- the plan ------------------------------------------------------------------------------

def check_plan(query_type: str, plan: dict[str, Any]) -> None:
    if query_type != "r":
        reason = QUERY_TYPES.get(query_type, f"is of type {query_type!r}, not read-only")
        raise AnalystQueryRefused(f"the query {reason}; this endpoint only reads")
    for operator, details in plan_operators(plan):
        name = operator.split("@")[0]
        if name in REFUSED_OPERATORS:
            raise AnalystQueryRefused(f"refused: {REFUSED_OPERATORS[name]}")
        if name.startswith("AdministrationCommand"):
            raise AnalystQueryRefused("refused: administration commands are not for analysts")
        if name == "ProcedureCall":
            details = check_procedure(details)
        check_functions(details)


def plan_operators(plan: dict[str, Any]) -> Iterator[tuple[str, str]]:
    yield plan.get("operatorType", ""), str(plan.get("args", {}).get("Details") or "")
    for child in plan.get("children", []):
        yield from plan_operators(child)


def check_procedure(details: str) -> str:
    """Refuse a procedure outside the allowlist; return the details after its name (the
    arguments, which may call functions)."""
    text = details.strip()
    match = QUALIFIED_CALL.match(text)
    name = match.group(1) if match else text.split("(")[0].strip()
    if name not in ALLOWED_PROCEDURES:
        allowed = ", ".join(sorted(ALLOWED_PROCEDURES))
        raise AnalystQueryRefused(f"procedure {name} is not open to analysts (allowed: {allowed})")
    return text[len(name):]


def check_functions(details: str) -> None:
    for name in QUALIFIED_CALL.findall(details):
        lowered = name.lower()
        if lowered.startswith("apoc."):
            raise AnalystQueryRefused(f"function {name} is not open to analysts")
        if lowered.startswith("gds.") and not name.startswith(ALLOWED_GDS_FUNCTION_PREFIXES):
            raise AnalystQueryRefused(
                f"function {name} changes or depends on GDS's in-memory catalog; "
                "analysts may use gds.util.*, gds.similarity.* and gds.version()")


@contextmanager
def translated_errors(timeout_s: float, stage: Stage) -> Iterator[None]:
    try:
        yield
    except AuthError as err:
        raise DatabaseAuthFailed(auth_failed_message("", "")) from err
    except (ServiceUnavailable, SessionExpired) as err:
        raise DatabaseUnavailable(f"Neo4j is not reachable ({err}); "
                                  "start it with `crase db start`") from err
    except ClientError as err:
        code = err.code or ""
        if "AccessMode" in code:
            raise AnalystQueryRefused("the database refused to write in a read transaction: "
                                      f"{neo4j_reason(None, err.message)}") from err
        if "TransactionTimedOut" in code:
            raise AnalystQueryTimeout(
                f"the query ran past {timeout_s:g} s and was stopped") from err
        raise AnalystQueryInvalid(neo4j_reason(code, err.message, stage.prefix)) from err
    except Neo4jError as err:
        if is_out_of_memory(err):
            raise QueryMemoryExceeded(memory_message("the analyst query")) from err
        log.warning("analyst query failed in the database: %s: %s", err.code, err.message)
        raise AnalystQueryInvalid(neo4j_reason(err.code, err.message, stage.prefix)) from err
    except RecursionError as err:
        # The driver packs and unpacks values recursively.
        raise AnalystQueryTooComplex("the result is nested too deeply to read; return "
                                     "flatter values") from err


def neo4j_reason(code: str | None, message: str | None, prefix: int = 0) -> str:
    """Neo4j's words, for the analyst: the first line of its message (the rest repeats the
    query), positions counted in the analyst's text rather than after the `prefix` put
    before it, Java class names left out and internal ids replaced."""
    line = (message or "").strip().split("\n", 1)[0]
    line = POSITION.sub(lambda found: shifted_position(found, prefix), line)
    line = JAVA_CLASS.sub("", line)
    line = UUID.sub("<id>", ELEMENT_ID.sub("<element id>", line))
    line = " ".join(line.split())[:MAX_REASON_CHARS]
    return f"{code}: {line}" if code else line


def shifted_position(found: LinearMatch, prefix: int) -> str:
    line, column, offset = (int(group) for group in found.groups())
    if line == 1:
        column = max(1, column - prefix)
    return f"(line {line}, column {column} (offset: {max(0, offset - prefix)}))"


def to_json(value: Any, depth: int = 0) -> Any:
    """A driver value as plain JSON: nodes, relationships and paths as objects, temporal
    values as ISO strings, bytes as base64, non-finite floats as strings."""
    if depth > MAX_RESULT_DEPTH:
        raise AnalystQueryTooComplex(f"the result nests values more than {MAX_RESULT_DEPTH} "
                                     "levels deep; return flatter values")
    inner = depth + 1
    if isinstance(value, Node):
        return {"element_id": value.element_id, "labels": sorted(value.labels),
                "properties": {k: to_json(v, inner) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {"element_id": value.element_id, "type": value.type,
                "start": value.start_node.element_id if value.start_node else None,
                "end": value.end_node.element_id if value.end_node else None,
                "properties": {k: to_json(v, inner) for k, v in value.items()}}
    if isinstance(value, Path):
        return {"nodes": [to_json(n, inner) for n in value.nodes],
                "relationships": [to_json(r, inner) for r in value.relationships]}
    if isinstance(value, dict):
        return {str(k): to_json(v, inner) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v, inner) for v in value]
    if isinstance(value, Date | DateTime | Time):
        return value.iso_format()
    if isinstance(value, Duration):
        return str(value)
    if isinstance(value, Point):
        return {"srid": value.srid, "coordinates": list(value)}
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
