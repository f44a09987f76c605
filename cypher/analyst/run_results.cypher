// A run's ranked results with the evidence that kept each one (JSON: the nearest seed, the
// retained edges on the way with Delta and their best-grounded claim pair).
//   :param run_id => 'the-run-id'
// Parameters: $run_id.
// Returns: rank, score, id, title, year, evidence.
MATCH (:Run {id: $run_id})-[x:RETURNED]->(p:Paper)
RETURN x.rank AS rank, x.score AS score, p.id AS id, p.title AS title, p.year AS year,
       x.evidence AS evidence
ORDER BY rank
