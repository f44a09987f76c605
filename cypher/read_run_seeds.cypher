// Which sub-query brought each seed of a run, with its relevance and recency ranks.
// Parameters: $run_id.
// Returns: paper_id, title, sub_query_index, sub_query, relevance_rank, recency_rank.
MATCH (:Run {id: $run_id})-[s:SEEDED]->(p:Paper)
RETURN p.id AS paper_id, p.title AS title, s.sub_query_index AS sub_query_index,
       s.sub_query AS sub_query, s.relevance_rank AS relevance_rank,
       s.recency_rank AS recency_rank
ORDER BY sub_query_index, relevance_rank
