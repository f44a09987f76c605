// 2-hop neighbourhood: the seeds, their neighbours, the neighbours' neighbours, and every
// citation edge among all of those. Grows fast around highly cited papers.
// Parameters: $seeds (list of paper ids), $excluded (ids left out with all their edges).
// Returns one row: nodes (list of ids, seeds first), years (each node's year, null when
// unknown: the walk's age weight needs them), edges (list of [citing_id, cited_id,
// scorer, scorer_version, theta, delta, isinfluential] - the scores as stored on the edge,
// null when unscored; isinfluential the publisher's mark, null where the corpus has none).
UNWIND $seeds AS seedId
MATCH (s:Paper {id: seedId}) WHERE NOT seedId IN $excluded
OPTIONAL MATCH (s)-[:CITES]-(n:Paper) WHERE NOT n.id IN $excluded
OPTIONAL MATCH (n)-[:CITES]-(m:Paper) WHERE NOT m.id IN $excluded
WITH collect(DISTINCT s.id) AS seedIds, collect(DISTINCT n.id) AS ring1,
     collect(DISTINCT m.id) AS ring2
WITH seedIds + [x IN ring1 WHERE NOT x IN seedIds] AS inner, ring2
WITH inner + [x IN ring2 WHERE NOT x IN inner] AS ids
UNWIND ids AS id
MATCH (a:Paper {id: id})
OPTIONAL MATCH (a)-[r:CITES]->(b:Paper) WHERE b.id IN ids
WITH ids, collect(CASE WHEN b IS NULL THEN null
                      ELSE [a.id, b.id, r.scorer, r.scorer_version, r.theta, r.delta,
                            r.isinfluential] END) AS edges
RETURN ids AS nodes, [id IN ids | COLLECT { MATCH (p:Paper {id: id}) RETURN p.year }[0]] AS years, edges
