// What a reader needs of each returned paper besides its rank: identifiers for its links,
// abstract, authors and venue (the `crase search` table and its --json results).
// Parameters: $ids (list of paper ids).
// Returns: id, title, year, authors, abstract, venue, journal_ref, arxiv_id, doi, s2_id.
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id, p.title AS title, p.year AS year, p.authors AS authors,
       p.abstract AS abstract, p.venue AS venue, p.journal_ref AS journal_ref,
       p.arxiv_id AS arxiv_id, p.doi AS doi, p.s2_id AS s2_id
