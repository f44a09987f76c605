// How each candidate is linked to each anchor (the papers the search starts from) across
// the whole corpus: co-citation (a third paper cites both) and bibliographic coupling
// (both cite a third paper), each counted and weighted as Adamic-Adar (a link through a
// paper of degree d weighs 1 / ln(1 + d)). A reference cited more than $max_citers times
// (a field's classic, which nearly everyone cites) couples nothing: it would cost the most
// paths and weigh the least. An excluded paper (a benchmark query's hidden source) links
// nothing and counts in no degree. The candidates are matched once and compared as nodes: reading each linked
// paper's id would cost a property read per path.
// Parameters: $ids (candidate ids), $anchors (anchor ids), $excluded (ids left out),
//             $max_citers (int).
// Returns: anchor, id, cocited, cocited_aa, coupled, coupled_aa (one row per anchor and
//          linked candidate).
MATCH (p:Paper) WHERE p.id IN $ids
WITH collect(p) AS candidates
UNWIND $anchors AS anchor
MATCH (a:Paper {id: anchor})
CALL (a, candidates) {
  MATCH (a)<-[:CITES]-(c:Paper)
  WHERE NOT c.id IN $excluded
  WITH c, 1.0 / log(1.0 + COUNT { (c)-[:CITES]->(x:Paper) WHERE NOT x.id IN $excluded })
       AS weight
  MATCH (c)-[:CITES]->(p:Paper)
  WHERE p IN candidates AND p <> a
  RETURN p, count(*) AS cocited, sum(weight) AS cocited_aa, 0 AS coupled, 0.0 AS coupled_aa
  UNION ALL
  MATCH (a)-[:CITES]->(r:Paper)
  WHERE NOT r.id IN $excluded
  WITH r, COUNT { (r)<-[:CITES]-(x:Paper) WHERE NOT x.id IN $excluded } AS citers
  WHERE citers <= $max_citers
  WITH r, 1.0 / log(1.0 + citers) AS weight
  MATCH (r)<-[:CITES]-(p:Paper)
  WHERE p IN candidates AND p <> a
  RETURN p, 0 AS cocited, 0.0 AS cocited_aa, count(*) AS coupled, sum(weight) AS coupled_aa
}
RETURN a.id AS anchor, p.id AS id, sum(cocited) AS cocited, sum(cocited_aa) AS cocited_aa,
       sum(coupled) AS coupled, sum(coupled_aa) AS coupled_aa
