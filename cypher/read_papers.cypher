// Display fields of the given papers.
// Parameters: $ids (list of paper ids).
// Returns: id, title, year, authors, abstract, arxiv_id, doi.
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id, p.title AS title, p.year AS year, p.authors AS authors,
       p.abstract AS abstract, p.arxiv_id AS arxiv_id, p.doi AS doi
