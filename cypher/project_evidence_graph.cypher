// Project the retained (pruned) evidence graph into GDS: the walk's steps with their
// weights, w = Delta * age(target)^-beta, computed by the rule's one home,
// crase.scoring.delta.edge_weight (search/ranking.py builds the steps, in the walk's
// orientation).
// The run's own node is the walk's origin: it points to every seed with the seed's restart
// weight, so a PageRank whose only source is the Run teleports to the seeds in proportion
// to those weights (GDS 2.13 restarts uniformly over its source nodes; one step through the
// origin turns that into the weighted personalization vector, see search/ranking.py).
// Each paper is looked up once and the steps point into $nodes by position, in flat lists
// of numbers (lists of maps cost the driver and Cypher several times more); one reading
// thread, as the graph is small.
// Parameters: $graph_name, $origin (Run id), $nodes (list of paper ids),
//             $origin_position (the number that stands for the Run in $sources:
//             crase.search.ranking.ORIGIN, passed in so it is written down only there),
//             $sources (positions in $nodes, or $origin_position), $targets (positions),
//             $weights (floats): one step each, the Run's links to the seeds first.
// Returns: graph, nodes, relationships (all null when a paper of $nodes is no longer in
//          the graph, so nothing was projected: the caller reports it).
MATCH (origin:Run {id: $origin})
UNWIND $nodes AS id
OPTIONAL MATCH (p:Paper {id: id})
WITH origin, collect(p) AS papers
// collect skips a missing paper, which would shift every position after it.
WHERE size(papers) = size($nodes)
UNWIND range(0, size($targets) - 1) AS j
WITH CASE WHEN $sources[j] = $origin_position THEN origin ELSE papers[$sources[j]] END
       AS source,
     papers[$targets[j]] AS target, $weights[j] AS w
WITH gds.graph.project($graph_name, source, target, {relationshipProperties: {w: w}},
                       {readConcurrency: 1}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
