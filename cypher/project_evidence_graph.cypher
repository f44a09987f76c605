// Project the retained (pruned) evidence graph into GDS with the ranking weight computed
// here: w = delta * age(target)^-beta, age = max(1, reference_year - target.year + 1)
// (a paper without a year counts as age 1). The rule's home is
// crase.scoring.delta.edge_weight; tests/scoring/test_rules_in_cypher.py holds this query to
// it. The orientation says which way the walk goes:
// 'references' follows citing -> cited, 'citing' follows cited -> citing, 'both' does both,
// each direction weighted by the age of the paper it leads to.
// The run's own node is the walk's origin: it points to every seed with the seed's restart
// weight, so a PageRank whose only source is the Run teleports to the seeds in proportion
// to those weights (GDS 2.13 restarts uniformly over its source nodes; one step through the
// origin turns that into the weighted personalization vector, see search/ranking.py).
// Each paper is looked up once (edges point into $nodes by position), which is what makes
// this fast for graphs with ten times more edges than nodes.
// Parameters: $graph_name, $origin (Run id), $nodes (list of paper ids), $rows (list of
//             {u, v, delta}: u the position of the citing paper in $nodes, v of the cited
//             one; may be empty: seeds without citations are still ranked), $restart
//             (list of {v, w}: a seed's position and its restart weight),
//             $orientation, $reference_year (int), $beta (float).
// Returns: graph, nodes, relationships.
MATCH (origin:Run {id: $origin})
UNWIND range(0, size($nodes) - 1) AS i
OPTIONAL MATCH (p:Paper {id: $nodes[i]})
WITH origin, i, p,
     CASE WHEN $reference_year - coalesce(p.year, $reference_year) + 1 < 1 THEN 1
          ELSE $reference_year - coalesce(p.year, $reference_year) + 1 END AS age
ORDER BY i
// One [node, age factor] pair per position (collect keeps the pairs even for a missing
// paper, so positions stay aligned).
WITH origin, collect([p, toFloat(age) ^ (-1.0 * $beta)]) AS papers
WITH papers, [r IN $restart | [origin, papers[r.v][0], toFloat(r.w), 0.0]] AS starts,
     [row IN $rows WHERE $orientation <> 'citing' |
        [papers[row.u][0], papers[row.v][0], row.delta * papers[row.v][1], row.delta]] AS forward,
     [row IN $rows WHERE $orientation <> 'references' |
        [papers[row.v][0], papers[row.u][0], row.delta * papers[row.u][1], row.delta]] AS backward
UNWIND starts + forward + backward AS link
WITH link WHERE link[0] IS NOT NULL AND link[1] IS NOT NULL
WITH gds.graph.project($graph_name, link[0], link[1], {
       relationshipProperties: {w: link[2], delta: link[3]}
     }) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
