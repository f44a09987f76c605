// Record every paper of the run's neighbourhood: kept for ranking or cut, and why.
// Parameters: $run_id, $rows (list of {paper_id, kept (bool), reason, seed (bool)}).
// Returns: linked (count).
MATCH (r:Run {id: $run_id})
UNWIND $rows AS row
MATCH (p:Paper {id: row.paper_id})
CREATE (r)-[:CONSIDERED {kept: row.kept, reason: row.reason, seed: row.seed}]->(p)
RETURN count(*) AS linked
