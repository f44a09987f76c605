// One paper with its citation counts and its claims (every extractor's, by rank).
// Parameters: $id (paper id).
// Returns: id, title, abstract, year, venue, authors, arxiv_id, doi, s2_id, categories,
//          journal_ref, date, references, cited_by, claims (list of {extractor, rank,
//          text, type, source_phrase}).
MATCH (p:Paper {id: $id})
OPTIONAL MATCH (p)-[h:HAS_CLAIM]->(c:Claim)
WITH p, h, c ORDER BY c.extractor, h.rank
WITH p, collect(CASE WHEN c IS NULL THEN null ELSE
       {extractor: c.extractor, rank: h.rank, text: c.text, type: c.type,
        source_phrase: c.source_phrase} END) AS claims
RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.year AS year,
       p.venue AS venue, p.authors AS authors, p.arxiv_id AS arxiv_id, p.doi AS doi,
       p.s2_id AS s2_id, p.categories AS categories, p.journal_ref AS journal_ref,
       p.date AS date, COUNT { (p)-[:CITES]->(:Paper) } AS references,
       COUNT { (p)<-[:CITES]-(:Paper) } AS cited_by, claims
