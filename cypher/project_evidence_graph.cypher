// Project the retained (pruned) evidence graph into GDS with the ranking weight computed
// here: w = delta * age(target)^-beta, age = max(1, reference_year - target.year + 1)
// (a paper without a year counts as age 1). The orientation says which way the walk goes:
// 'references' follows citing -> cited, 'citing' follows cited -> citing, 'both' does both,
// each direction weighted by the age of the paper it leads to.
// Parameters: $graph_name, $rows (list of {citing, cited, delta}), $orientation,
//             $reference_year (int), $beta (float).
// Returns: graph, nodes, relationships.
UNWIND $rows AS row
MATCH (u:Paper {id: row.citing}), (v:Paper {id: row.cited})
UNWIND CASE $orientation
         WHEN 'references' THEN [[u, v]]
         WHEN 'citing' THEN [[v, u]]
         ELSE [[u, v], [v, u]]
       END AS step
WITH step[0] AS source, step[1] AS target, row.delta AS delta
WITH source, target, delta,
     CASE WHEN $reference_year - coalesce(target.year, $reference_year) + 1 < 1 THEN 1
          ELSE $reference_year - coalesce(target.year, $reference_year) + 1 END AS age
WITH gds.graph.project($graph_name, source, target, {
       relationshipProperties: {w: delta * (toFloat(age) ^ (-1.0 * $beta)), delta: delta}
     }) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
