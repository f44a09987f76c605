// Personalized PageRank from the seeds over the projected evidence graph (GDS). Scores are
// divided by their sum over all nodes, which turns GDS's leaky scores into the paper's
// stationary distribution (the two are proportional; see crase/search/ranking.py).
// Parameters: $graph_name, $seeds (ids present in the projection), $damping,
//             $max_iterations, $tolerance, $k.
// concurrency 1: an evidence graph has a few thousand edges, and on graphs that small one
// thread finishes sooner than several (measured: about 0.05 s against 0.1-0.2 s).
// Returns: id, score (best first, at most $k rows; papers the walk never reaches are left
// out rather than returned with score 0).
MATCH (s:Paper) WHERE s.id IN $seeds
WITH collect(s) AS sources
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: sources, relationshipWeightProperty: 'w', dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: 1
})
YIELD nodeId, score
WITH collect([nodeId, score]) AS scored, sum(score) AS total
UNWIND scored AS row
WITH row[1] / total AS score, row[0] AS nodeId WHERE score > 0
WITH score, gds.util.asNode(nodeId).id AS id
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
