// One page of the papers a paper cites, newest first.
// Parameters: $id (paper id), $skip, $limit.
// Returns: id, title, year, arxiv_id, doi, s2_id.
MATCH (:Paper {id: $id})-[:CITES]->(q:Paper)
WITH q ORDER BY q.year DESC, q.id SKIP $skip LIMIT $limit
RETURN q.id AS id, q.title AS title, q.year AS year, q.arxiv_id AS arxiv_id, q.doi AS doi,
       q.s2_id AS s2_id
