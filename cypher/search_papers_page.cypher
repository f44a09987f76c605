// One page of full-text hits over title and abstract, best first.
// Parameters: $query (Lucene query string, already escaped), $skip (int), $limit (int).
// Returns: id, title, year, authors, score (Lucene relevance).
CALL db.index.fulltext.queryNodes('paper_text', $query, {skip: $skip, limit: $limit})
YIELD node, score
RETURN node.id AS id, node.title AS title, node.year AS year, node.authors AS authors, score
ORDER BY score DESC, id
