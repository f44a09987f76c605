// Record which search brought each seed (sub_query_index 0: the query itself; l: the
// plan's l-th sub-query; -1: seeds given by the caller), with its relevance and recency
// ranks, the restart weight that search gave it, and the seed's share of the walk's
// restart mass (over all its searches).
// Parameters: $run_id, $rows (list of {paper_id, sub_query_index, sub_query,
//             relevance_rank, recency_rank, weight, restart_share}).
// Returns: linked (count).
MATCH (r:Run {id: $run_id})
UNWIND $rows AS row
MATCH (p:Paper {id: row.paper_id})
CREATE (r)-[:SEEDED {sub_query_index: row.sub_query_index, sub_query: row.sub_query,
                     relevance_rank: row.relevance_rank, recency_rank: row.recency_rank,
                     weight: row.weight, restart_share: row.restart_share}]->(p)
RETURN count(*) AS linked
