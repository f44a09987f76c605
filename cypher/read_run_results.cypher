// The ranked results of a run with their evidence (JSON string) and bibliographic fields.
// Parameters: $run_id.
// Returns: rank, score, evidence, id, title, year, authors, abstract, venue, journal_ref,
//          arxiv_id, doi, s2_id (best rank first).
MATCH (:Run {id: $run_id})-[x:RETURNED]->(p:Paper)
RETURN x.rank AS rank, x.score AS score, x.evidence AS evidence, p.id AS id,
       p.title AS title, p.year AS year, p.authors AS authors, p.abstract AS abstract,
       p.venue AS venue, p.journal_ref AS journal_ref, p.arxiv_id AS arxiv_id, p.doi AS doi,
       p.s2_id AS s2_id
ORDER BY rank
