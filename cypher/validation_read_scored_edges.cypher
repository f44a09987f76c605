// The citation edges one scorer has scored, with what it stored, for the corpus-wide
// validation sample. The matrix comes back only where it was scored at another threshold
// than the one asked for, so the caller can recompute Delta at that theta.
// Parameters: $scorer, $version, $theta.
// Returns: citing, cited, delta, matrix, rows, cols.
MATCH (u:Paper)-[r:CITES]->(v:Paper)
WHERE r.scorer = $scorer AND r.scorer_version = $version
RETURN u.id AS citing, v.id AS cited, r.delta AS delta,
       CASE WHEN r.theta IS NOT NULL AND abs(r.theta - $theta) > 1e-12 THEN r.matrix END
         AS matrix,
       r.matrix_rows AS rows, r.matrix_cols AS cols
ORDER BY citing, cited
