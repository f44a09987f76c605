// Papers among the given ids that have no claims yet from this extractor, with their text.
// Parameters: $ids (list of paper ids), $extractor (extractor name).
// Returns: id, title, abstract, intro.
UNWIND $ids AS id
MATCH (p:Paper {id: id})
WHERE NOT EXISTS { (p)-[:HAS_CLAIM]->(:Claim {extractor: $extractor}) }
RETURN p.id AS id, p.title AS title, coalesce(p.abstract, '') AS abstract,
       coalesce(p.intro, '') AS intro
