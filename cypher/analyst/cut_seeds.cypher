// Seeds a run found but did not keep: every citation edge around them was pruned, so the
// walk could not use them. Shows which sub-queries brought each one.
//   :param run_id => 'the-run-id'
// Parameters: $run_id.
// Returns: id, title, sub_queries, reason, citation_edges (in the whole corpus).
MATCH (r:Run {id: $run_id})-[s:SEEDED]->(p:Paper)
OPTIONAL MATCH (r)-[c:CONSIDERED]->(p)
WITH p, c, collect(s.sub_query) AS sub_queries
WHERE c IS NULL OR NOT c.kept
RETURN p.id AS id, p.title AS title, sub_queries,
       coalesce(c.reason, 'not in the neighbourhood (excluded)') AS reason,
       COUNT { (p)-[:CITES]-(:Paper) } AS citation_edges
ORDER BY id
