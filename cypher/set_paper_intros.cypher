// Store the introduction read from each paper's PDF (the text downstream is title +
// abstract + intro). Papers not in the graph are skipped.
// Parameters: $rows (list of {id, intro}).
// Returns: written (count of papers updated).
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
SET p.intro = row.intro
RETURN count(p) AS written
