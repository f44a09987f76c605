// The citation edges among the papers a run considered, with what scoring stored on them.
// The matrix comes back only where it was scored at another threshold than the run's, so
// the caller can recompute Delta at the run's theta. With a 1-hop run only the edges that
// touch a seed belonged to its neighbourhood.
// One row holding every edge as a list: a large run has thousands of edges, and the driver
// spends longer on each record it reads than on the values in it.
// Parameters: $run_id, $theta (the run's threshold), $one_hop (bool).
// Returns: edges, a list of [citing, cited, delta, theta, scorer, scorer_version, matrix,
//          rows, cols, isinfluential (the publisher's mark, null where the corpus has
//          none)], ordered by citing then cited.
MATCH (r:Run {id: $run_id})-[cu:CONSIDERED]->(u:Paper)-[e:CITES]->(v:Paper)<-[cv:CONSIDERED]-(r)
WHERE NOT $one_hop OR cu.seed OR cv.seed
WITH u.id AS citing, v.id AS cited, e
ORDER BY citing, cited
RETURN collect([citing, cited, e.delta, e.theta, e.scorer, e.scorer_version,
                CASE WHEN e.theta IS NOT NULL AND abs(e.theta - $theta) > 1e-12 THEN e.matrix END,
                e.matrix_rows, e.matrix_cols, e.isinfluential]) AS edges
