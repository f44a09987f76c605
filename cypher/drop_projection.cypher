// Drop a GDS projection if it exists (runs always drop theirs, also on error).
// Parameters: $graph_name.
// Returns: graph (null rows when it did not exist).
CALL gds.graph.drop($graph_name, false) YIELD graphName
RETURN graphName AS graph
