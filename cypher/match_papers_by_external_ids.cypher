// Which graph papers are the same works as records from a provider: matched by Semantic
// Scholar id, then arXiv id, then DOI (each backed by an index), first match wins.
// Parameters: $rows (list of {key, s2_id, arxiv_id, doi}; any id may be null).
// Returns: key, id (the graph paper's id), filled (its properties that are not empty).
UNWIND $rows AS row
CALL (row) {
  MATCH (p:Paper {s2_id: row.s2_id}) RETURN p, 1 AS rank
  UNION
  MATCH (p:Paper {arxiv_id: row.arxiv_id}) RETURN p, 2 AS rank
  UNION
  MATCH (p:Paper {doi: row.doi}) RETURN p, 3 AS rank
}
WITH row, p, rank
ORDER BY rank
WITH row, collect(p)[0] AS p
RETURN row.key AS key, p.id AS id, [k IN keys(p) WHERE p[k] <> '' | k] AS filled
