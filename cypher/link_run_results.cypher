// Record the ranked results of a run with their evidence (JSON string).
// Parameters: $run_id, $rows (list of {paper_id, rank, score, evidence}).
// Returns: linked (count).
MATCH (r:Run {id: $run_id})
UNWIND $rows AS row
MATCH (p:Paper {id: row.paper_id})
CREATE (r)-[:RETURNED {rank: row.rank, score: row.score, evidence: row.evidence}]->(p)
RETURN count(*) AS linked
