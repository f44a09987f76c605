// Drop a GDS projection if it exists. cypher/rank_pagerank.cypher drops a search's
// projection itself; search/walk.py calls this only when projecting or ranking failed,
// so no projection outlives its search.
// Parameters: $graph_name.
// Returns: graph (null rows when it did not exist).
CALL gds.graph.drop($graph_name, false) YIELD graphName
RETURN graphName AS graph
