// How often each given paper is cited in the whole corpus, the citations of the excluded
// papers (a benchmark query's hidden source paper) not counted.
// Parameters: $ids (paper ids), $excluded (ids whose citations do not count).
// Returns: id, cited_by.
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id,
       COUNT { (p)<-[:CITES]-(:Paper) }
       - COUNT { (p)<-[:CITES]-(x:Paper) WHERE x.id IN $excluded } AS cited_by
