// Record which sub-query brought each seed, with its relevance and recency ranks.
// Parameters: $run_id, $rows (list of {paper_id, sub_query_index, sub_query,
//             relevance_rank, recency_rank}).
// Returns: linked (count).
MATCH (r:Run {id: $run_id})
UNWIND $rows AS row
MATCH (p:Paper {id: row.paper_id})
CREATE (r)-[:SEEDED {sub_query_index: row.sub_query_index, sub_query: row.sub_query,
                     relevance_rank: row.relevance_rank, recency_rank: row.recency_rank}]->(p)
RETURN count(*) AS linked
