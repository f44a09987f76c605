// Personalized PageRank over the projected evidence graph (GDS), started from the walk's
// origin, which links to the seeds with their restart weights, then the projection
// dropped in the same query (one round trip fewer; search/walk.py drops it with
// cypher/drop_projection.cypher only when this query fails). The projection numbers its
// nodes (cypher/project_evidence_graph.cypher): paper i is $nodes[i] and the origin is
// $origin, so a score is mapped back to its paper without a lookup. Scores are divided by
// their sum over the papers, which turns GDS's leaky scores into the paper's stationary
// distribution (the two are proportional; see search/walk.py).
// Parameters: $graph_name, $nodes (paper ids by number), $origin (the origin's number),
//             $damping, $max_iterations, $tolerance, $k.
// concurrency 1: an evidence graph has a few thousand edges, and on graphs that small one
// thread finishes sooner than several (measured: about 0.05 s against 0.1-0.2 s).
// logProgress false: fewer log lines (GDS still logs each iteration's start and end).
// The drop comes after the aggregation (collect), so the stream has ended when it runs.
// Returns: id, score (best first, at most $k rows; papers the walk never reaches are left
// out rather than returned with score 0).
CALL gds.pageRank.stream($graph_name, {
  sourceNodes: [$origin], relationshipWeightProperty: 'w', dampingFactor: $damping,
  maxIterations: $max_iterations, tolerance: $tolerance, concurrency: 1,
  logProgress: false
})
YIELD nodeId, score
WITH nodeId, score WHERE nodeId <> $origin
WITH collect([$nodes[nodeId], score]) AS scored, sum(score) AS total
CALL gds.graph.drop($graph_name, false) YIELD graphName
UNWIND scored AS row
WITH row[1] / total AS score, row[0] AS id WHERE score > 0
RETURN id, score
ORDER BY score DESC, id
LIMIT $k
