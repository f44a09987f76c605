// A run's evidence graph as Browser draws it: the papers it kept and the citation edges it
// ranked on (Delta above the run's tau). Set both parameters, then paste the query:
//   :param run_id => 'the-run-id'
//   :param tau => 0.0            // the run's tau: see params on the Run node
// Each CITES edge shows delta, theta and the scorer that wrote them. The delta stored on
// an edge is at the theta it was scored with; GET /runs/{id}/graph recomputes it at the
// run's theta when the two differ.
// Parameters: $run_id, $tau.
// Returns: u (citing Paper), c (CITES), v (cited Paper).
MATCH (r:Run {id: $run_id})-[:CONSIDERED {kept: true}]->(u:Paper)-[c:CITES]->(v:Paper)
      <-[:CONSIDERED {kept: true}]-(r)
WHERE c.delta > $tau
RETURN u, c, v
