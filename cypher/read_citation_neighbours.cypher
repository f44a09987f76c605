// References and citing papers of the citation-gate seeds, seed by seed, in a fixed order.
// At most $limit neighbours per seed and direction (most recent first, unknown years last),
// so a heavily cited seed cannot flood the gate; the caller counts the cut from `available`.
// seed_index is the position in $seed_ids (a seed may be given by several corpus versions).
// Parameters: $seed_ids (list of paper ids, in seed order), $excluded (list of paper ids),
//             $limit (int).
// Returns: seed_index, seed_id, direction ('reference' | 'citing'), available, id, title,
//          abstract, year, venue, authors, doi, arxiv_id, s2_id.
UNWIND range(0, size($seed_ids) - 1) AS seed_index
MATCH (s:Paper {id: $seed_ids[seed_index]})
CALL (s) {
  MATCH (s)-[:CITES]->(n:Paper)
  WHERE NOT n.id IN $excluded
  WITH n ORDER BY coalesce(n.year, 0) DESC, n.id
  WITH collect(n) AS found
  RETURN 'reference' AS direction, size(found) AS available, found[0..$limit] AS kept
  UNION
  MATCH (s)<-[:CITES]-(n:Paper)
  WHERE NOT n.id IN $excluded
  WITH n ORDER BY coalesce(n.year, 0) DESC, n.id
  WITH collect(n) AS found
  RETURN 'citing' AS direction, size(found) AS available, found[0..$limit] AS kept
}
UNWIND kept AS n
RETURN seed_index, s.id AS seed_id, direction, available, n.id AS id, n.title AS title,
       n.abstract AS abstract, n.year AS year, n.venue AS venue, n.authors AS authors,
       n.doi AS doi, n.arxiv_id AS arxiv_id, n.s2_id AS s2_id
ORDER BY seed_index, direction DESC, coalesce(year, 0) DESC, id
