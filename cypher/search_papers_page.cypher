// One page of full-text hits over title and abstract, best first.
// Parameters: $query (Lucene query string, already escaped), $skip (int), $limit (int).
// Returns: id, title, year, authors, arxiv_id, doi, s2_id, score (Lucene relevance).
CALL db.index.fulltext.queryNodes('paper_text', $query, {skip: $skip, limit: $limit})
YIELD node, score
RETURN node.id AS id, node.title AS title, node.year AS year, node.authors AS authors,
       node.arxiv_id AS arxiv_id, node.doi AS doi, node.s2_id AS s2_id, score
ORDER BY score DESC, id
