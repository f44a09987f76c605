// Full-text candidates for the idea workflow, best first, with the fields identity
// resolution, selection and assessment need. Also used for title look-ups of recalled or
// provider records (query `title:(...)`).
// Parameters: $query (Lucene query string), $limit (int), $excluded (list of paper ids).
// Returns: id, title, abstract, year, venue, authors, doi, arxiv_id, s2_id, score.
CALL db.index.fulltext.queryNodes('paper_text', $query, {limit: $limit + size($excluded)})
YIELD node, score
WHERE NOT node.id IN $excluded
RETURN node.id AS id, node.title AS title, node.abstract AS abstract, node.year AS year,
       node.venue AS venue, node.authors AS authors, node.doi AS doi,
       node.arxiv_id AS arxiv_id, node.s2_id AS s2_id, score
ORDER BY score DESC, id
LIMIT $limit
