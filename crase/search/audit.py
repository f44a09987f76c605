"""The Run node: parameters, plan, seeds, the fate of every paper, results, costs, times.

An analyst opens a run in Neo4j Browser with
    MATCH (r:Run {id: $id})-[x]->(p:Paper) RETURN r, x, p
and follows SEEDED (which sub-query brought a seed), CONSIDERED (kept or cut, and why)
and RETURNED (rank, score, evidence) to the papers and their CITES edges (delta, matrix).
"""

import json
from datetime import UTC, datetime
from typing import Any

from crase.graph import Graph
from crase.search.seeds import Seed


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def browser_query(run_id: str) -> str:
    return f"MATCH (r:Run {{id: '{run_id}'}})-[x]->(p:Paper) RETURN r, x, p"


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class RunRecorder:
    def __init__(self, graph: Graph, run_id: str) -> None:
        self.graph = graph
        self.run_id = run_id

    def open(self, kind: str, query: str, params: dict[str, Any],
             backends: dict[str, str]) -> None:
        self.graph.write("create_run", id=self.run_id, kind=kind, query=query,
                         params=to_json(params), started=now_iso(), backends=to_json(backends))

    def record_seeds(self, seeds: list[Seed], restart: dict[str, float]) -> None:
        rows = [{"paper_id": s.paper_id, "sub_query_index": s.sub_query_index,
                 "sub_query": s.sub_query, "relevance_rank": s.relevance_rank,
                 "recency_rank": s.recency_rank, "weight": s.weight,
                 "restart_share": restart.get(s.paper_id, 0.0)} for s in seeds]
        if rows:
            self.graph.write("link_run_seeds", run_id=self.run_id, rows=rows)

    def record_considered(self, rows: list[dict[str, Any]]) -> None:
        for start in range(0, len(rows), 5000):
            self.graph.write("link_run_graph", run_id=self.run_id, rows=rows[start:start + 5000])

    def record_results(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.graph.write("link_run_results", run_id=self.run_id, rows=rows)

    def close(self, status: str, plan: list[str], counts: dict[str, Any],
              timings: dict[str, float], usage: dict[str, Any], error: str | None = None) -> None:
        self.graph.write("finish_run", id=self.run_id, status=status, plan=plan,
                         counts=to_json(counts), timings=to_json(timings), usage=to_json(usage),
                         error=error, finished=now_iso())
