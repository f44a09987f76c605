// The citation edges among the papers a run considered, with what scoring stored on them.
// The matrix comes back only where it was scored at another threshold than the run's, so
// the caller can recompute Delta at the run's theta. With a 1-hop run only the edges that
// touch a seed belonged to its neighbourhood.
// Parameters: $run_id, $theta (the run's threshold), $one_hop (bool).
// Returns: citing, cited, delta, theta, scorer, scorer_version, matrix, rows, cols.
MATCH (r:Run {id: $run_id})-[cu:CONSIDERED]->(u:Paper)-[e:CITES]->(v:Paper)<-[cv:CONSIDERED]-(r)
WHERE NOT $one_hop OR cu.seed OR cv.seed
RETURN u.id AS citing, v.id AS cited, e.delta AS delta, e.theta AS theta,
       e.scorer AS scorer, e.scorer_version AS scorer_version,
       CASE WHEN e.theta IS NOT NULL AND abs(e.theta - $theta) > 1e-12 THEN e.matrix END
         AS matrix,
       e.matrix_rows AS rows, e.matrix_cols AS cols
ORDER BY citing, cited
