// Totals from the count store (constant time): what a finished load left in the graph.
// Parameters: none.
// Returns: papers, citations.
CALL () { MATCH (p:Paper) RETURN count(p) AS papers }
CALL () { MATCH ()-[c:CITES]->() RETURN count(c) AS citations }
RETURN papers, citations
