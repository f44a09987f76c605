"""A server-free stand-in for `crase.graph.Graph`: each named query is answered from canned
rows, and each call is recorded with its parameters, as the GDS Python client's
`CollectingQueryRunner` collects the queries it is given.

For tests of what the code sends and of how it checks, words, exports or renders given
rows. What the database answers is tested against the real one (tests/conftest.py starts
it); a test that needs the database's own answer does not belong on this graph.
"""

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from crase.cypher.catalog import load_query, query_names
from crase.graph import Graph

Row = dict[str, Any]
# Rows for a query name: a list (a copy each time), a function of the parameters, or an
# exception to raise, as Graph.read raises its wrapped errors.
Answer = list[Row] | Callable[[dict[str, Any]], list[Row]] | BaseException


@dataclass(frozen=True)
class Call:
    mode: Literal["read", "write"]
    name: str
    params: dict[str, Any]


class DriverSessionRefused(AssertionError):
    """Code under test went around Graph.read/write to the driver: that test needs the real
    database."""


class RecordingDriver:
    """What code asks of the driver itself beside the named queries: whether the database
    answers (start-up and run submission ask). Sessions are refused."""

    def __init__(self) -> None:
        self.connectivity_checks = 0
        self.sessions_asked = 0

    def verify_connectivity(self) -> None:
        self.connectivity_checks += 1

    def session(self, **_: Any) -> Any:
        self.sessions_asked += 1
        raise DriverSessionRefused(
            "a session was asked of the recording graph's driver: this test needs the real "
            "database (the `graph` fixture), not the recording graph")

    def close(self) -> None:
        pass


class RecordingGraph(Graph):
    """`read`, `write` and `write_all` by catalog name; every call lands in `calls`.

    A name the catalog does not hold fails as it would against the database (QueryNotFound);
    a name without canned rows answers no rows. A Graph by type, since the app's dependency
    injection checks the type of what it is given."""

    def __init__(self, answers: Mapping[str, Answer] | None = None) -> None:
        self.recording_driver = RecordingDriver()
        super().__init__(self.recording_driver)  # type: ignore[arg-type]
        self.answers: dict[str, Answer] = dict(answers or {})
        self.calls: list[Call] = []
        self.checked = True

    def read(self, name: str, timeout_s: float | None = None, **params: Any) -> list[Row]:
        return self._answer("read", name, params)

    def write(self, name: str, **params: Any) -> list[Row]:
        return self._answer("write", name, params)

    def write_all(self, statements: list[tuple[str, dict[str, Any]]]) -> None:
        for name, params in statements:
            self._answer("write", name, params)

    def apply_schema(self) -> list[str]:
        return query_names("schema")

    def check_connection(self) -> None:
        self.recording_driver.verify_connectivity()

    def close(self) -> None:
        pass

    # what the tests read back -------------------------------------------------------------
    def names(self) -> list[str]:
        """The query names sent, in order."""
        return [call.name for call in self.calls]

    def sent(self, name: str) -> list[dict[str, Any]]:
        """The parameters of each call of `name`, in order."""
        return [call.params for call in self.calls if call.name == name]

    def writes(self) -> list[Call]:
        return [call for call in self.calls if call.mode == "write"]

    def _answer(self, mode: Literal["read", "write"], name: str,
                params: dict[str, Any]) -> list[Row]:
        load_query(name)  # an unknown name is QueryNotFound, as with the real graph
        self.calls.append(Call(mode, name, params))
        answer = self.answers.get(name, [])
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(params)
        return copy.deepcopy(answer)
