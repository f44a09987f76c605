// Merge a second node of one work into the work's node: the kept node takes the fields it
// lacks, the citations either way (an edge both had keeps the kept node's properties) and
// the runs' links; the second node's claims are dropped with it (the kept node's text is
// the one claims are extracted from).
// Parameters: $old (id of the node to remove), $kept (id of the node that stays).
// Returns: moved (citations moved to the kept node).
MATCH (old:Paper {id: $old}), (kept:Paper {id: $kept})
SET kept.title = coalesce(kept.title, old.title),
    kept.abstract = CASE WHEN coalesce(kept.abstract, '') = '' THEN old.abstract
                         ELSE kept.abstract END,
    kept.year = coalesce(kept.year, old.year), kept.venue = coalesce(kept.venue, old.venue),
    kept.authors = coalesce(kept.authors, old.authors), kept.doi = coalesce(kept.doi, old.doi),
    kept.s2_id = coalesce(kept.s2_id, old.s2_id), kept.intro = coalesce(kept.intro, old.intro),
    kept.date = coalesce(kept.date, old.date),
    kept.journal_ref = coalesce(kept.journal_ref, old.journal_ref),
    kept.categories = coalesce(kept.categories, old.categories)
WITH old, kept
CALL (old, kept) {
  MATCH (old)-[c:CITES]->(cited:Paper) WHERE cited <> kept
  MERGE (kept)-[moved:CITES]->(cited) ON CREATE SET moved = properties(c)
  RETURN count(*) AS out
}
CALL (old, kept) {
  MATCH (citing:Paper)-[c:CITES]->(old) WHERE citing <> kept
  MERGE (citing)-[moved:CITES]->(kept) ON CREATE SET moved = properties(c)
  RETURN count(*) AS in
}
CALL (old, kept) {
  MATCH (run:Run)-[link:RETURNED]->(old)
  CREATE (run)-[moved:RETURNED]->(kept) SET moved = properties(link)
  RETURN count(*) AS returned
}
CALL (old, kept) {
  MATCH (run:Run)-[link:SEEDED]->(old)
  CREATE (run)-[moved:SEEDED]->(kept) SET moved = properties(link)
  RETURN count(*) AS seeded
}
CALL (old, kept) {
  MATCH (run:Run)-[link:CONSIDERED]->(old)
  CREATE (run)-[moved:CONSIDERED]->(kept) SET moved = properties(link)
  RETURN count(*) AS considered
}
CALL (old, kept) {
  MATCH (run:Run)-[link:IDEA_CANDIDATE]->(old)
  CREATE (run)-[moved:IDEA_CANDIDATE]->(kept) SET moved = properties(link)
  RETURN count(*) AS candidates
}
CALL (old) {
  MATCH (old)-[:HAS_CLAIM]->(claim:Claim)
  DETACH DELETE claim
  RETURN count(*) AS claims
}
DETACH DELETE old
RETURN out + in AS moved
