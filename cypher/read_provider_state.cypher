// What the graph knows of each paper's Semantic Scholar lists: its S2 id and other
// external ids (to ask for it), and when its reference and citation lists were fetched.
// Parameters: $ids (list of paper ids).
// Returns: id, s2_id, arxiv_id, doi, references_at, citations_at (ISO strings or null).
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id, p.s2_id AS s2_id, p.arxiv_id AS arxiv_id, p.doi AS doi,
       p.s2_references_at AS references_at, p.s2_citations_at AS citations_at
