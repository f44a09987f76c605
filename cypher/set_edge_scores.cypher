// Write entailment results on CITES edges: Delta, the flattened matrix and its shape, the
// threshold, the scorer's name and version, and the time.
// Parameters: $rows (list of {citing, cited, delta, matrix (flat list), rows, cols}),
//             $theta, $scorer, $version, $scored_at (ISO timestamp).
// Returns: written (count).
UNWIND $rows AS row
MATCH (u:Paper {id: row.citing})-[r:CITES]->(v:Paper {id: row.cited})
SET r.delta = row.delta, r.matrix = row.matrix, r.matrix_rows = row.rows,
    r.matrix_cols = row.cols, r.theta = $theta, r.scorer = $scorer,
    r.scorer_version = $version, r.scored_at = datetime($scored_at)
RETURN count(*) AS written
