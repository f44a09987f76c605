// Papers that have no embedding from this encoder yet, one page at a time in id order
// (keyset paging: pass the last id of the previous page).
// Parameters: $model (encoder name), $after (paper id; '' for the first page), $limit.
// Returns: id, title, abstract.
MATCH (p:Paper) WHERE p.id > $after AND coalesce(p.embedding_model, '') <> $model
RETURN p.id AS id, p.title AS title, p.abstract AS abstract
ORDER BY p.id
LIMIT $limit
