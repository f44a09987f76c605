// Title and abstract of every paper, one page at a time in id order (keyset paging: pass
// the last id of the previous page).
// Parameters: $after (paper id; '' for the first page), $limit (int).
// Returns: id, title, abstract.
MATCH (p:Paper) WHERE p.id > $after
RETURN p.id AS id, p.title AS title, p.abstract AS abstract
ORDER BY p.id
LIMIT $limit
