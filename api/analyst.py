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
   users), with a timeout (`api.analyst_timeout_s`).
3. At most `api.analyst_row_limit` + 1 rows are pulled; the response says whether more
   existed.

What was found for each kind of statement is in tests/api/test_analyst.py.
"""

import base64
import math
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from neo4j import ManagedTransaction, unit_of_work
from neo4j.exceptions import (
    AuthError,
    ClientError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time

from crase.errors import (
    AnalystQueryInvalid,
    AnalystQueryRefused,
    AnalystQueryTimeout,
    DatabaseUnavailable,
)
from crase.graph import Graph

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
QUALIFIED_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*\(")


@dataclass(frozen=True)
class AnalystResult:
    columns: list[str]
    rows: list[dict[str, Any]]
    truncated: bool
    row_limit: int
    elapsed_ms: float


def run_analyst_query(graph: Graph, text: str, params: dict[str, Any], timeout_s: float,
                      row_limit: int) -> AnalystResult:
    """Check the plan, then run the query read-only; see the module docstring."""
    started = time.perf_counter()
    with translated_errors(timeout_s), graph.driver.session(
            database=graph.database, default_access_mode="READ") as session:
        query_type, plan = session.execute_read(
            unit_of_work(timeout=timeout_s)(explain), text, params)
        check_plan(query_type, plan)
        columns, rows = session.execute_read(
            unit_of_work(timeout=timeout_s)(fetch_rows), text, params, row_limit)
    return AnalystResult(columns, rows[:row_limit], len(rows) > row_limit, row_limit,
                         round((time.perf_counter() - started) * 1000, 1))


def explain(tx: ManagedTransaction, text: str,
            params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    # Only a keyword is put before the analyst's text; their values stay parameters.
    summary = tx.run("EXPLAIN " + text, params).consume()
    return summary.query_type or "", summary.plan or {}


def fetch_rows(tx: ManagedTransaction, text: str, params: dict[str, Any],
               row_limit: int) -> tuple[list[str], list[dict[str, Any]]]:
    result = tx.run(text, params)
    columns = list(result.keys())
    records = result.fetch(row_limit + 1)
    return columns, [{key: to_json(value) for key, value in record.items()}
                     for record in records]


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
def translated_errors(timeout_s: float) -> Iterator[None]:
    try:
        yield
    except (ServiceUnavailable, SessionExpired, AuthError) as err:
        raise DatabaseUnavailable(f"Neo4j is not reachable ({err})") from err
    except ClientError as err:
        code = err.code or ""
        if "AccessMode" in code:
            raise AnalystQueryRefused(
                f"the database refused to write in a read transaction: {err.message}") from err
        if "TransactionTimedOut" in code:
            raise AnalystQueryTimeout(
                f"the query ran past {timeout_s:g} s and was stopped") from err
        raise AnalystQueryInvalid(f"{code}: {err.message}") from err
    except Neo4jError as err:
        raise AnalystQueryInvalid(f"{err.code}: {err.message}") from err


def to_json(value: Any) -> Any:
    """A driver value as plain JSON: nodes, relationships and paths as objects, temporal
    values as ISO strings, bytes as base64, non-finite floats as strings."""
    if isinstance(value, Node):
        return {"element_id": value.element_id, "labels": sorted(value.labels),
                "properties": {k: to_json(v) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {"element_id": value.element_id, "type": value.type,
                "start": value.start_node.element_id if value.start_node else None,
                "end": value.end_node.element_id if value.end_node else None,
                "properties": {k: to_json(v) for k, v in value.items()}}
    if isinstance(value, Path):
        return {"nodes": [to_json(n) for n in value.nodes],
                "relationships": [to_json(r) for r in value.relationships]}
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
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
