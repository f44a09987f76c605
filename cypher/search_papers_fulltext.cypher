// Full-text hits for one sub-query, best first.
// Parameters: $query (Lucene query string), $limit (int), $excluded (list of paper ids).
// Returns: id, title, year, score (Lucene relevance).
CALL db.index.fulltext.queryNodes('paper_text', $query, {limit: $limit + size($excluded)})
YIELD node, score
WHERE NOT node.id IN $excluded
RETURN node.id AS id, node.title AS title, node.year AS year, score
ORDER BY score DESC
LIMIT $limit
