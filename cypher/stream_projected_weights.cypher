// The weighted citation relationships of a projected evidence graph, as GDS computed them
// (input to rankers that run outside GDS, such as SALSA); the origin's links to the seeds
// are left out (the ranker gets the restart weights directly).
// Parameters: $graph_name.
// Returns: source, target, w.
CALL gds.graph.relationshipProperty.stream($graph_name, 'w')
YIELD sourceNodeId, targetNodeId, propertyValue
WITH gds.util.asNode(sourceNodeId) AS source, gds.util.asNode(targetNodeId) AS target,
     propertyValue AS w
WHERE source:Paper
RETURN source.id AS source, target.id AS target, w
