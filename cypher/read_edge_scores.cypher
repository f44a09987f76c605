// Delta of the given edges as scored by one scorer; edges it has not scored (or that do
// not exist) come back with delta null.
// Parameters: $edges (list of [citing_id, cited_id]), $scorer, $version.
// Returns: citing, cited, delta, theta.
UNWIND $edges AS e
MATCH (u:Paper {id: e[0]})-[r:CITES]->(v:Paper {id: e[1]})
WITH e, r, (r.scorer = $scorer AND r.scorer_version = $version) AS ours
RETURN e[0] AS citing, e[1] AS cited,
       CASE WHEN ours THEN r.delta END AS delta, CASE WHEN ours THEN r.theta END AS theta
