// 1.5-hop neighbourhood: the seeds, their references and citing papers, and EVERY citation
// edge among all of those (neighbour-neighbour edges included).
// Parameters: $seeds (list of paper ids), $excluded (ids left out with all their edges).
// Returns one row: nodes (list of ids, seeds first), years (each node's year, null when
// unknown: the walk's age weight needs them), edges (list of [citing_id, cited_id,
// scorer, scorer_version, theta, delta, isinfluential] - the scores as stored on the edge,
// null when unscored, so a warm search reads every edge once; isinfluential the
// publisher's mark, null where the corpus has none).
UNWIND $seeds AS seedId
MATCH (s:Paper {id: seedId}) WHERE NOT seedId IN $excluded
OPTIONAL MATCH (s)-[:CITES]-(n:Paper) WHERE NOT n.id IN $excluded
WITH collect(DISTINCT s.id) AS seedIds, collect(DISTINCT n.id) AS neighbourIds
WITH seedIds + [x IN neighbourIds WHERE NOT x IN seedIds] AS ids
UNWIND ids AS id
MATCH (a:Paper {id: id})
OPTIONAL MATCH (a)-[r:CITES]->(b:Paper) WHERE b.id IN ids
WITH ids, collect(CASE WHEN b IS NULL THEN null
                      ELSE [a.id, b.id, r.scorer, r.scorer_version, r.theta, r.delta,
                            r.isinfluential] END) AS edges
RETURN ids AS nodes, [id IN ids | COLLECT { MATCH (p:Paper {id: id}) RETURN p.year }[0]] AS years, edges
