// Which of the given ids are papers in the graph (an edge's end missing from the input).
// Parameters: $ids (list of paper ids).
// Returns: id (one row per id that exists).
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id
