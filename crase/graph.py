"""The connection to Neo4j: one driver per process, queries by catalog name, errors wrapped.

Everything above this module talks to the graph through `Graph.read` and `Graph.write`
with the name of a file in `cypher/` and its parameters.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, LiteralString

from crase.cypher.catalog import load_query, query_names
from crase.database import Neo4jServer
from crase.errors import (
    DatabaseAuthFailed,
    DatabaseError,
    DatabaseUnavailable,
    QueryMemoryExceeded,
    QueryTimedOut,
)
from crase.neo4j_driver import (
    AuthError,
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Neo4jError,
    Node,
    Path,
    Relationship,
    ServiceUnavailable,
    SessionExpired,
    unit_of_work,
)
from crase.settings import DatabaseSettings

Row = dict[str, Any]


class Graph:
    """A driver plus the database name; thin, so tests and the API share it.

    The first query checks the connection once (one round trip), so a closed port or a
    wrong password is reported at once instead of after the driver's transaction retries
    (30 s and more); once it has answered, a lost connection is retried as usual."""

    def __init__(self, driver: Driver, database: str = "neo4j", address: str = "",
                 user: str = "", read_timeout_s: float = 60.0) -> None:
        self.driver = driver
        self.database = database
        self.address = address  # the Bolt URI, for messages
        self.user = user
        # Every read is a transaction with a timeout, so the database ends one that a
        # request no longer waits for (DatabaseSettings.read_timeout_s).
        self.read_timeout_s = read_timeout_s
        self.checked = False

    @classmethod
    def connect(cls, settings: DatabaseSettings, retry_s: float | None = None) -> "Graph":
        """`retry_s` caps how long a transaction is retried while the database is away
        (the driver's default is 30 s; an HTTP handler wants its 503 sooner)."""
        password = settings.password or Neo4jServer(settings).password()
        options: dict[str, Any] = {} if retry_s is None else {"max_transaction_retry_time": retry_s}
        # Server notifications (unknown property keys on a fresh graph, deprecations) are
        # for query authors, not for users of the tool.
        driver = GraphDatabase.driver(settings.bolt_uri(), auth=(settings.user, password),
                                      notifications_min_severity="OFF", **options)
        return cls(driver, settings.database, settings.bolt_uri(), settings.user,
                   settings.read_timeout_s)

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.driver.close()

    def read(self, name: str, timeout_s: float | None = None, **params: Any) -> list[Row]:
        """Run the named query in a read transaction and return its rows as dicts. The
        database ends the transaction after `timeout_s` (by default `read_timeout_s`):
        QueryTimedOut."""
        timeout_s = self.read_timeout_s if timeout_s is None else timeout_s
        if timeout_s <= 0:
            raise QueryTimedOut(f"query {name} was not sent: its time ran out (timeout "
                                f"{timeout_s:g} s) before it could start")
        work = unit_of_work(timeout=timeout_s)(_collect)
        with self._wrapped(name), self.driver.session(database=self.database) as session:
            return session.execute_read(work, load_query(name), params)

    def write(self, name: str, **params: Any) -> list[Row]:
        """Run the named query in a write transaction (retried on transient errors)."""
        with self._wrapped(name), self.driver.session(database=self.database) as session:
            return session.execute_write(_collect, load_query(name), params)

    def write_all(self, statements: list[tuple[str, dict[str, Any]]]) -> None:
        """Several named queries in one write transaction: all of them happen or none."""
        def work(tx: ManagedTransaction) -> None:
            for name, params in statements:
                tx.run(load_query(name), params).consume()

        names = ", ".join(dict.fromkeys(name for name, _ in statements))
        with self._wrapped(names), self.driver.session(database=self.database) as session:
            session.execute_write(work)

    def apply_schema(self) -> list[str]:
        """Apply every `cypher/schema/*.cypher` file; each is idempotent (IF NOT EXISTS)."""
        applied = []
        for name in query_names("schema"):
            with self._wrapped(name), self.driver.session(database=self.database) as session:
                session.run(load_query(name)).consume()
            applied.append(name)
        return applied

    def check_connection(self) -> None:
        """One round trip to the server: DatabaseUnavailable when nothing answers there,
        DatabaseAuthFailed when it refuses the user or password."""
        with self._wrapped("connection check"):
            self.driver.verify_connectivity()
        self.checked = True

    @contextmanager
    def _wrapped(self, name: str) -> Iterator[None]:
        if not self.checked and name != "connection check":
            self.check_connection()
        try:
            yield
        except AuthError as err:
            raise DatabaseAuthFailed(auth_failed_message(self.address, self.user)) from err
        except (ServiceUnavailable, SessionExpired) as err:
            where = f" at {self.address}" if self.address else ""
            raise DatabaseUnavailable(
                f"Neo4j is not reachable{where} ({err}); start it with `crase db start`, "
                "or point CRASE_DATABASE__URI (or CRASE_DATABASE__BOLT_PORT) at a running one"
            ) from err
        except Neo4jError as err:
            if is_out_of_memory(err):
                raise QueryMemoryExceeded(memory_message(f"query {name}")) from err
            if "TransactionTimedOut" in (err.code or ""):
                raise QueryTimedOut(
                    f"query {name} ran past its transaction timeout and the database ended "
                    "it; narrow the request (fewer steps, fewer papers) or raise the "
                    "timeout") from err
            raise DatabaseError(f"query {name} failed: {err.code}: {err.message}") from err


# Neo4j's codes for a transaction past db.memory.transaction.max (a memory pool's limit) and
# for a heap exhausted in spite of it.
OUT_OF_MEMORY_CODES = ("MemoryPoolOutOfMemoryError", "General.OutOfMemoryError")


def is_out_of_memory(err: Neo4jError) -> bool:
    return any(code in (err.code or "") for code in OUT_OF_MEMORY_CODES)


def memory_message(what: str) -> str:
    return (f"{what} needed more memory than one transaction may use and the database "
            "ended it; ask for less (fewer rows, shorter lists and texts), or raise "
            "CRASE_DATABASE__TRANSACTION_MEMORY")


def auth_failed_message(address: str, user: str) -> str:
    where = f" at {address}" if address else ""
    who = f" for user {user!r}" if user else ""
    return (f"Neo4j{where} refused the login{who}: authentication failed; set "
            "CRASE_DATABASE__USER and CRASE_DATABASE__PASSWORD to the server's credentials "
            "(or unset the password to use the one `crase db start` generated)")


# Values the driver hands back as objects; everything else arrives as plain Python data.
GRAPH_TYPES = (Node, Relationship, Path)


def _collect(tx: ManagedTransaction, query: LiteralString, params: dict[str, Any]) -> list[Row]:
    """The rows as dicts. `Record.data()` walks every nested value to turn graph objects
    into dicts, which costs more than the query itself for the long lists of ids a search
    reads; only a row holding a node, relationship or path takes that walk (the queries
    here return those only at the top level)."""
    rows = []
    for record in tx.run(query, params):
        values = record.values()
        if any(isinstance(value, GRAPH_TYPES) for value in values):
            rows.append(record.data())
        else:
            rows.append(dict(zip(record.keys(), values, strict=True)))
    return rows
