// 1-hop neighbourhood: the seeds, their references and citing papers, and only the edges
// that touch a seed (seed-neighbour and seed-seed).
// Parameters: $seeds (list of paper ids), $excluded (ids left out with all their edges).
// Returns one row: nodes (list of ids, seeds first), years (each node's year, null when
// unknown: the walk's age weight needs them), edges (list of [citing_id, cited_id,
// scorer, scorer_version, theta, delta, isinfluential] - the scores as stored on the edge,
// null when unscored; isinfluential the publisher's mark, null where the corpus has none).
UNWIND $seeds AS seedId
MATCH (s:Paper {id: seedId}) WHERE NOT seedId IN $excluded
OPTIONAL MATCH (s)-[:CITES]-(n:Paper) WHERE NOT n.id IN $excluded
WITH collect(DISTINCT s.id) AS seedIds, collect(DISTINCT n.id) AS neighbourIds
WITH seedIds, seedIds + [x IN neighbourIds WHERE NOT x IN seedIds] AS ids
UNWIND seedIds AS seedId
MATCH (s:Paper {id: seedId})
OPTIONAL MATCH (s)-[r:CITES]-(n:Paper) WHERE n.id IN ids
WITH ids, collect(DISTINCT CASE WHEN r IS NULL THEN null
                                ELSE [startNode(r).id, endNode(r).id, r.scorer,
                                      r.scorer_version, r.theta, r.delta,
                                      r.isinfluential] END) AS edges
RETURN ids AS nodes, [id IN ids | COLLECT { MATCH (p:Paper {id: id}) RETURN p.year }[0]] AS years, edges
