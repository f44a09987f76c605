// Start here: one run, its seeds and what it returned (not every paper it considered, which
// draws hundreds of nodes; `run_evidence_graph` shows the retained edges among them). In
// Neo4j Browser set the run id first, then paste the query:
//   :param run_id => 'the-run-id'
// Click a relationship to see SEEDED {sub_query, ranks} or RETURNED {rank, score, evidence}.
// Parameters: $run_id.
// Returns: r (the Run), x (SEEDED, RETURNED), p (Paper).
MATCH (r:Run {id: $run_id})-[x:SEEDED|RETURNED]->(p:Paper)
RETURN r, x, p
