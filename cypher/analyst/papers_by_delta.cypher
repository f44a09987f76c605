// Papers ranked by Delta: how much of the claims of the papers citing them they ground
// (sum and mean of Delta over their scored incoming citations). Within one run's
// neighbourhood, or over the whole corpus with run_id null.
//   :param run_id => 'the-run-id'     // or: :param run_id => null
//   :param min_citations => 2
// Parameters: $run_id (or null), $min_citations.
// Returns: id, title, year, citing_edges, mean_delta, total_delta (25 best by total).
MATCH (u:Paper)-[c:CITES]->(v:Paper)
WHERE c.delta IS NOT NULL
  AND ($run_id IS NULL OR (EXISTS { (:Run {id: $run_id})-[:CONSIDERED]->(u) }
                           AND EXISTS { (:Run {id: $run_id})-[:CONSIDERED]->(v) }))
WITH v, count(c) AS citing_edges, avg(c.delta) AS mean_delta, sum(c.delta) AS total_delta
WHERE citing_edges >= $min_citations
RETURN v.id AS id, v.title AS title, v.year AS year, citing_edges,
       round(mean_delta, 3) AS mean_delta, round(total_delta, 3) AS total_delta
ORDER BY total_delta DESC, id
LIMIT 25
