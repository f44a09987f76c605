// Which graph papers are the same works as OpenAlex works: matched by graph id, then
// OpenAlex id, then arXiv id, then DOI (each backed by an index), first match wins.
// Parameters: $rows (list of {key, id, openalex_id, arxiv_id, doi}; any but key may be null).
// Returns: key, id (the graph paper's id), filled (its properties that are not empty).
UNWIND $rows AS row
CALL (row) {
  MATCH (p:Paper {id: row.id}) RETURN p, 1 AS rank
  UNION
  MATCH (p:Paper {openalex_id: row.openalex_id}) RETURN p, 2 AS rank
  UNION
  MATCH (p:Paper {arxiv_id: row.arxiv_id}) RETURN p, 3 AS rank
  UNION
  MATCH (p:Paper {doi: row.doi}) RETURN p, 4 AS rank
}
WITH row, p, rank
ORDER BY rank
WITH row, collect(p)[0] AS p
RETURN row.key AS key, p.id AS id, [k IN keys(p) WHERE p[k] <> '' | k] AS filled
