"""What a search writes onto its Run, beyond the shared lifecycle (crase/run_lifecycle.py).

An analyst opens a run in Neo4j Browser with
    MATCH (r:Run {id: $id})-[x]->(p:Paper) RETURN r, x, p
and follows SEEDED (which search brought a seed), CONSIDERED (kept or cut, and why)
and RETURNED (rank, score, evidence) to the papers and their CITES edges (delta, matrix).
"""

from typing import Any

from crase.run_lifecycle import RunRecorder
from crase.search.seeds import Seed


def record_seeds(recorder: RunRecorder, seeds: list[Seed], restart: dict[str, float]) -> None:
    rows = [{"paper_id": s.paper_id, "sub_query_index": s.sub_query_index,
             "sub_query": s.sub_query, "relevance_rank": s.relevance_rank,
             "recency_rank": s.recency_rank, "weight": s.weight,
             "restart_share": restart.get(s.paper_id, 0.0)} for s in seeds]
    recorder.link("link_run_seeds", rows)


def record_considered(recorder: RunRecorder, rows: list[dict[str, Any]]) -> None:
    recorder.link_at_close("link_run_graph", rows)


def record_results(recorder: RunRecorder, rows: list[dict[str, Any]]) -> None:
    recorder.link_at_close("link_run_results", rows)
