// Which search brought each seed of a run (sub_query_index 0: the query itself; l: the
// plan's l-th sub-query; -1: given), with its ranks and its share of the restart mass.
// Parameters: $run_id.
// Returns: paper_id, title, sub_query_index, sub_query, relevance_rank, recency_rank,
//          weight, restart_share.
MATCH (:Run {id: $run_id})-[s:SEEDED]->(p:Paper)
RETURN p.id AS paper_id, p.title AS title, s.sub_query_index AS sub_query_index,
       s.sub_query AS sub_query, s.relevance_rank AS relevance_rank,
       s.recency_rank AS recency_rank, s.weight AS weight, s.restart_share AS restart_share
ORDER BY sub_query_index, relevance_rank
