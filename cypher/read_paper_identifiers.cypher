// One page of the papers that have an arXiv id or a DOI, in id order (the identity
// migration reads the whole graph this way, a page at a time).
// Parameters: $after (the last id of the previous page; '' for the first), $page (rows).
// Returns: id, arxiv_id, doi.
MATCH (p:Paper)
WHERE p.id > $after AND (p.arxiv_id IS NOT NULL OR p.doi IS NOT NULL)
RETURN p.id AS id, p.arxiv_id AS arxiv_id, p.doi AS doi
ORDER BY p.id
LIMIT $page
