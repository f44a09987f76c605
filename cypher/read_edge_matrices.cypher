// Entailment matrices of the given edges as scored by one scorer (flattened, with shape).
// Parameters: $edges (list of [citing_id, cited_id]), $scorer, $version.
// Returns: citing, cited, matrix (flat list, row-major), rows, cols.
UNWIND $edges AS e
MATCH (u:Paper {id: e[0]})-[r:CITES]->(v:Paper {id: e[1]})
WHERE r.scorer = $scorer AND r.scorer_version = $version
RETURN e[0] AS citing, e[1] AS cited, r.matrix AS matrix, r.matrix_rows AS rows,
       r.matrix_cols AS cols
