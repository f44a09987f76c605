// Papers with any of the given DOIs or arXiv ids (identity resolution of recalled and
// provider records); both lookups use their property index.
// Parameters: $dois (list of strings), $arxiv_ids (list of strings), $excluded (list of ids).
// Returns: id, title, abstract, year, venue, authors, doi, arxiv_id, s2_id, matched_by.
CALL () {
  UNWIND $dois AS doi
  MATCH (p:Paper {doi: doi})
  RETURN p, 'doi' AS matched_by
  UNION
  UNWIND $arxiv_ids AS arxiv_id
  MATCH (p:Paper {arxiv_id: arxiv_id})
  RETURN p, 'arxiv_id' AS matched_by
}
WITH p, matched_by
WHERE NOT p.id IN $excluded
RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.year AS year,
       p.venue AS venue, p.authors AS authors, p.doi AS doi, p.arxiv_id AS arxiv_id,
       p.s2_id AS s2_id, matched_by
ORDER BY id
