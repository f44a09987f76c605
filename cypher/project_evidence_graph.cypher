// Project the retained (pruned) evidence graph into GDS: the walk's steps with their
// weights, w = Delta * age(target)^-beta, computed by the rule's one home,
// crase.scoring.delta.edge_weight (search/walk.py builds the steps, in the walk's
// orientation).
// The projection is a graph of numbers, not of stored nodes: a paper is its position in
// the list search/walk.py holds (0 .. n-1), and the walk's origin, which stands for the
// run, is n. A Cypher aggregation takes plain integers as node ids, so nothing is read from
// the database here; looking up every paper and the Run node made the projection cost
// about 40 ms of server time on hep-th's evidence graphs against 25 ms without.
// The origin points to every seed with the seed's restart weight, so a PageRank whose only
// source is the origin teleports to the seeds in proportion to those weights (GDS 2.13
// restarts uniformly over its source nodes; one step through the origin turns that into
// the weighted personalization vector, see search/walk.py). One reading thread, as the
// graph is small; flat lists of numbers, as lists of maps cost the driver and Cypher
// several times more.
// PROFILE: before it projects, GDS's Cypher aggregation estimates its rows by running
// `EXPLAIN` + this query's text without its parameters, and Neo4j plans a query with
// missing parameters anew every time (no plan cache): 20-30 ms of server CPU per search,
// half the projection's cost. `EXPLAIN PROFILE ...` is refused at once (two execution
// modes), GDS then sizes its importer as the rows come, and the projected graph is the
// same (docs/speed.md, "The rank stage"). The profile itself costs less than a millisecond.
// Parameters: $graph_name, $sources, $targets (node numbers), $weights (floats): one step
//             each, the origin's links to the seeds first.
// Returns: graph, nodes, relationships.
PROFILE
UNWIND range(0, size($targets) - 1) AS j
WITH gds.graph.project($graph_name, $sources[j], $targets[j],
                       {relationshipProperties: {w: $weights[j]}}, {readConcurrency: 1}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
