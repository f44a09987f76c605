// Edges a run pruned, and why: among the papers it considered, the citation edges with no
// Delta (not scored: a side had no claims, or scoring failed) or Delta <= tau.
//   :param run_id => 'the-run-id'
//   :param tau => 0.0
// Parameters: $run_id, $tau.
// Returns: citing, cited, delta, theta, scorer, reason (lowest Delta first).
MATCH (r:Run {id: $run_id})-[:CONSIDERED]->(u:Paper)-[c:CITES]->(v:Paper)<-[:CONSIDERED]-(r)
WHERE c.delta IS NULL OR c.delta <= $tau
RETURN u.id AS citing, v.id AS cited, c.delta AS delta, c.theta AS theta, c.scorer AS scorer,
       CASE WHEN c.delta IS NULL THEN 'not scored'
            ELSE 'delta ' + toString(round(c.delta, 3)) + ' <= tau ' + toString($tau)
       END AS reason
ORDER BY delta, citing, cited
