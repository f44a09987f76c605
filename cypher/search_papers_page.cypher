// One page of full-text hits over title and abstract, best first.
// Parameters: $query (Lucene query string, already escaped), $skip (int), $limit (int).
// Returns: id, title, year, authors, arxiv_id, doi, s2_id, score (Lucene relevance).
// The index is asked for the best $skip + $limit hits and 50 more, and the page is cut
// here, in one order (score, then id) for every page: the index's own skip option gave
// pages that overlapped (one paper on page 1 and on page 2), and the 50 more bring the
// papers that tie with the page's last one, which the index alone would pick among by
// its internal order.
CALL db.index.fulltext.queryNodes('paper_text', $query, {limit: $skip + $limit + 50})
YIELD node, score
WITH node, score
ORDER BY score DESC, node.id
SKIP $skip
LIMIT $limit
RETURN node.id AS id, node.title AS title, node.year AS year, node.authors AS authors,
       node.arxiv_id AS arxiv_id, node.doi AS doi, node.s2_id AS s2_id, score
