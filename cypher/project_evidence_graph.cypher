// Project the retained (pruned) evidence graph into GDS with the ranking weight computed
// here: w = delta * age(target)^-beta, age = max(1, reference_year - target.year + 1)
// (a paper without a year counts as age 1). The rule's home is
// crase.scoring.delta.edge_weight; tests/scoring/test_rules_in_cypher.py holds this query to
// it. Which way the walk goes along each citation (its orientation) is decided by the
// caller: every step arrives here as (from, to, delta), weighted by the age of the paper it
// leads to.
// The run's own node is the walk's origin: it points to every seed with the seed's restart
// weight, so a PageRank whose only source is the Run teleports to the seeds in proportion
// to those weights (GDS 2.13 restarts uniformly over its source nodes; one step through the
// origin turns that into the weighted personalization vector, see search/ranking.py).
// Speed (search/ranking.py has the measurements): each paper is looked up once and steps
// point into $nodes by position, in flat lists of numbers (lists of maps or of pairs cost
// the driver and Cypher several times more); one reading thread, as the graph is small.
// Parameters: $graph_name, $origin (Run id), $nodes (list of paper ids),
//             $step_from, $step_to (positions in $nodes), $step_delta (floats): the walk's
//             steps, possibly none (seeds without citations are still ranked);
//             $restart_to (seed positions), $restart_w (their restart weights);
//             $reference_year (int), $beta (float).
// Returns: graph, nodes, relationships (all null when a paper of $nodes is no longer in
//          the graph, so nothing was projected: the caller reports it).
MATCH (origin:Run {id: $origin})
UNWIND $nodes AS id
OPTIONAL MATCH (p:Paper {id: id})
WITH origin, collect(p) AS papers,
     collect(toFloat(CASE WHEN $reference_year - coalesce(p.year, $reference_year) + 1 < 1
                          THEN 1 ELSE $reference_year - coalesce(p.year, $reference_year) + 1
                     END) ^ (-1.0 * $beta)) AS factors
// collect skips a missing paper, which would shift every position after it.
WHERE size(papers) = size($nodes)
UNWIND range(0, size($restart_to) + size($step_from) - 1) AS j
WITH origin, papers, factors, j, j - size($restart_to) AS k
WITH CASE WHEN k < 0 THEN origin ELSE papers[$step_from[k]] END AS source,
     CASE WHEN k < 0 THEN papers[$restart_to[j]] ELSE papers[$step_to[k]] END AS target,
     CASE WHEN k < 0 THEN toFloat($restart_w[j])
          ELSE $step_delta[k] * factors[$step_to[k]] END AS w
WITH gds.graph.project($graph_name, source, target, {relationshipProperties: {w: w}},
                       {readConcurrency: 1}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
