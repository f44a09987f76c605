// Project the retained (pruned) evidence graph into GDS with the ranking weight computed
// here: w = delta * age(target)^-beta, age = max(1, reference_year - target.year + 1)
// (a paper without a year counts as age 1). The orientation says which way the walk goes:
// 'references' follows citing -> cited, 'citing' follows cited -> citing, 'both' does both,
// each direction weighted by the age of the paper it leads to.
// Each paper is looked up once (edges point into $nodes by position), which is what makes
// this fast for graphs with ten times more edges than nodes.
// Parameters: $graph_name, $nodes (list of paper ids), $rows (list of {u, v, delta}: u the
//             position of the citing paper in $nodes, v of the cited one), $orientation,
//             $reference_year (int), $beta (float).
// Returns: graph, nodes, relationships.
UNWIND range(0, size($nodes) - 1) AS i
OPTIONAL MATCH (p:Paper {id: $nodes[i]})
WITH i, p,
     CASE WHEN $reference_year - coalesce(p.year, $reference_year) + 1 < 1 THEN 1
          ELSE $reference_year - coalesce(p.year, $reference_year) + 1 END AS age
ORDER BY i
// One [node, age factor] pair per position (collect keeps the pairs even for a missing
// paper, so positions stay aligned).
WITH collect([p, toFloat(age) ^ (-1.0 * $beta)]) AS papers
UNWIND $rows AS row
UNWIND CASE $orientation
         WHEN 'references' THEN [[row.u, row.v]]
         WHEN 'citing' THEN [[row.v, row.u]]
         ELSE [[row.u, row.v], [row.v, row.u]]
       END AS step
WITH papers[step[0]] AS source, papers[step[1]] AS target, row.delta AS delta
WHERE source[0] IS NOT NULL AND target[0] IS NOT NULL
WITH gds.graph.project($graph_name, source[0], target[0], {
       relationshipProperties: {w: delta * target[1], delta: delta}
     }) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
