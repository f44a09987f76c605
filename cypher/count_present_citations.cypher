// How many of the given edges are in the graph: whether a finished load's citations are
// still there (a later import may have replaced the database). Rows grouped by citing
// paper, as merge_citations writes them; each edge counts once however many copies exist.
// Parameters: $rows (list of {citing: paper id, cited: list of paper ids}).
// Returns: present (count of the given edges found).
UNWIND $rows AS row
MATCH (a:Paper {id: row.citing})
UNWIND row.cited AS cited_id
WITH a, cited_id
WHERE EXISTS { (a)-[:CITES]->(:Paper {id: cited_id}) }
RETURN count(*) AS present
