// Every citation edge one entailment scorer has scored, with its matrix: the claim-level
// evidence a benchmark reads for a whole corpus at once (crase.bench.delta_features).
// Parameters: $scorer, $version.
// Returns: citing, cited, matrix (flat list, row-major), rows, cols.
MATCH (u:Paper)-[r:CITES]->(v:Paper)
WHERE r.scorer = $scorer AND r.scorer_version = $version
RETURN u.id AS citing, v.id AS cited, r.matrix AS matrix, r.matrix_rows AS rows,
       r.matrix_cols AS cols
