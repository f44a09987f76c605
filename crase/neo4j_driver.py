"""The neo4j driver, imported without pyarrow; every product module takes the driver's
names from here.

The driver imports pyarrow (and pandas) wherever they are installed, for data-frame and
Arrow results that Crase never asks for. pyarrow is installed for the bulk import's edge
checks (ingest/edge_table.py), so every command that connects would pay for it: about
50 MiB and 0.2 s of a command-line search. While the driver loads, `pyarrow` is marked
absent in `sys.modules` (a None entry makes its import raise ImportError, which the driver
expects and allows); the mark is taken away at once, so pyarrow still imports for the
code that uses it. Where pyarrow is loaded already, nothing is hidden.
"""

import sys

_HIDDEN = "pyarrow"
_hid = _HIDDEN not in sys.modules and "neo4j" not in sys.modules
if _hid:
    sys.modules[_HIDDEN] = None  # type: ignore[assignment]
try:
    from neo4j import Driver, GraphDatabase, ManagedTransaction, Session, Transaction, unit_of_work
    from neo4j.exceptions import (
        AuthError,
        ClientError,
        DriverError,
        Neo4jError,
        ServiceUnavailable,
        SessionExpired,
    )
    from neo4j.graph import Node, Path, Relationship
    from neo4j.spatial import Point
    from neo4j.time import Date, DateTime, Duration, Time
finally:
    if _hid:
        del sys.modules[_HIDDEN]

__all__ = [
    "AuthError", "ClientError", "Date", "DateTime", "Driver", "DriverError", "Duration",
    "GraphDatabase", "ManagedTransaction", "Neo4jError", "Node", "Path", "Point",
    "Relationship", "ServiceUnavailable", "Session", "SessionExpired", "Time", "Transaction",
    "unit_of_work",
]
