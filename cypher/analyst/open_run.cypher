// Start here: one run with everything it points at (its seeds, every paper it considered,
// and what it returned). In Neo4j Browser set the run id first, then paste the query:
//   :param run_id => 'the-run-id'
// Click a relationship to see SEEDED {sub_query, ranks}, CONSIDERED {kept, reason} or
// RETURNED {rank, score, evidence}.
// Parameters: $run_id.
// Returns: r (the Run), x (SEEDED, CONSIDERED, RETURNED), p (Paper).
MATCH (r:Run {id: $run_id})-[x]->(p:Paper)
RETURN r, x, p
