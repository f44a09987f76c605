// Store each paper's arXiv id in the identity module's spelling (no version, no prefix,
// from an arXiv DOI where none was given).
// Parameters: $rows (list of {id, arxiv_id}).
// Returns: nothing.
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
SET p.arxiv_id = row.arxiv_id
