// Claims of the given papers from one extractor, in rank order.
// Parameters: $ids (list of paper ids), $extractor (extractor name).
// Returns: paper_id, claims (list of {text, type, source_phrase}, by rank).
UNWIND $ids AS id
MATCH (p:Paper {id: id})-[h:HAS_CLAIM]->(c:Claim {extractor: $extractor})
WITH p, h, c ORDER BY h.rank
RETURN p.id AS paper_id,
       collect({text: c.text, type: c.type, source_phrase: c.source_phrase}) AS claims
