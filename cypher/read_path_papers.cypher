// What the connector shows of each paper on its paths.
// Parameters: $ids (list of paper ids).
// Returns: id, title, year, first_author, arxiv_id, doi, s2_id.
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id, p.title AS title, p.year AS year, p.authors[0] AS first_author,
       p.arxiv_id AS arxiv_id, p.doi AS doi, p.s2_id AS s2_id
