// Give papers the graph id of their work (a `doi:10.48550/arxiv.*` id becomes the arXiv
// id) where no other paper has that id yet; the others are merged into it
// (merge_paper_into).
// Parameters: $rows (list of {id, key}).
// Returns: id (the old id of each paper given its key).
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
WHERE NOT EXISTS { MATCH (:Paper {id: row.key}) }
SET p.id = row.key
RETURN row.id AS id
