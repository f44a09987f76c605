// Personalized PageRank over the projected evidence graph (GDS), started from the run's
// origin node, which links to the seeds with their restart weights. Scores are divided by
// their sum over the papers, which turns GDS's leaky scores into the paper's stationary
// distribution (the two are proportional; see search/ranking.py).
// Parameters: $graph_name, $origin (Run id), $damping, $max_iterations, $tolerance, $k.
// concurrency 1: an evidence graph has a few thousand edges, and on graphs that small one
// thread finishes sooner than several (measured: about 0.05 s against 0.1-0.2 s); no
// progress log, whose bookkeeping costs more than the iterations on a graph this size.
// Returns: id, score (best first, at most $k rows; papers the walk never reaches are left
// out rather than returned with score 0).
MATCH (origin:Run {id: $origin})
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: [origin], relationshipWeightProperty: 'w', dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: 1,
  logProgress: false
})
YIELD nodeId, score
WITH gds.util.asNode(nodeId) AS node, score WHERE node:Paper
WITH collect([node.id, score]) AS scored, sum(score) AS total
UNWIND scored AS row
WITH row[1] / total AS score, row[0] AS id WHERE score > 0
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
