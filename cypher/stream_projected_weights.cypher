// The weighted relationships of a projected evidence graph, as GDS computed them
// (input to rankers that run outside GDS, such as SALSA).
// Parameters: $graph_name.
// Returns: source, target, w.
CALL gds.graph.relationshipProperty.stream($graph_name, 'w')
YIELD sourceNodeId, targetNodeId, propertyValue
RETURN gds.util.asNode(sourceNodeId).id AS source, gds.util.asNode(targetNodeId).id AS target,
       propertyValue AS w
