// Papers ranked by their links with the given papers across the whole corpus: how often a
// paper is cited together with one of them (co-citation: a third paper cites both) plus
// how many references it shares with one (bibliographic coupling), summed over the given
// papers. What Connected Papers ranks by: a search from papers takes its top as candidates
// of the learned order, and the quality benchmark ranks by it as a baseline. An excluded
// paper is never ranked and its citations do not count; the given papers are never ranked.
// Parameters: $ids (given paper ids), $excluded (list of paper ids), $limit (int).
// Returns: id, score (co-citations + shared references), year; best first, ties by id.
UNWIND $ids AS given
MATCH (g:Paper {id: given})
CALL (g) {
  MATCH (g)<-[:CITES]-(c:Paper)-[:CITES]->(p:Paper)
  WHERE NOT c.id IN $excluded
  RETURN p, count(*) AS links
  UNION ALL
  MATCH (g)-[:CITES]->(r:Paper)<-[:CITES]-(p:Paper)
  WHERE NOT r.id IN $excluded
  RETURN p, count(*) AS links
}
WITH p, sum(links) AS score
WHERE NOT p.id IN $excluded AND NOT p.id IN $ids
RETURN p.id AS id, score, p.year AS year
ORDER BY score DESC, id
LIMIT $limit
