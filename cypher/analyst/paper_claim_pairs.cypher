// The claim pairs that ground a paper's citations: for each paper it cites, every pair
// (its claim i, the cited paper's claim j) whose entailment score reaches the threshold the
// edge was scored at. Row i of an edge's matrix is the citing paper's claim of rank i + 1,
// column j the cited paper's claim of rank j + 1, for the extractor the scorer used.
//   :param paper_id => '0301003'
//   :param extractor => 'offline-sentences-v1'   // see the Run node's backends
// Parameters: $paper_id, $extractor.
// Returns: cited, cited_title, delta, citing_claim, cited_claim, support (best first).
MATCH (u:Paper {id: $paper_id})-[c:CITES]->(v:Paper)
WHERE c.matrix IS NOT NULL
UNWIND range(0, size(c.matrix) - 1) AS k
WITH u, v, c, k, c.matrix[k] AS support
WHERE support >= c.theta
MATCH (u)-[:HAS_CLAIM {rank: k / c.matrix_cols + 1}]->(ci:Claim {extractor: $extractor})
MATCH (v)-[:HAS_CLAIM {rank: k % c.matrix_cols + 1}]->(cj:Claim {extractor: $extractor})
RETURN v.id AS cited, v.title AS cited_title, round(c.delta, 3) AS delta,
       ci.text AS citing_claim, cj.text AS cited_claim, round(support, 3) AS support
ORDER BY delta DESC, cited, support DESC
