// The in-corpus references of the given papers (the query's text hits), the excluded
// papers (a benchmark query's hidden source) left out, each reference with its year.
// Parameters: $ids (paper ids), $excluded (ids left out).
// Returns: id, references (list of [cited id, cited year]).
UNWIND $ids AS id
MATCH (h:Paper {id: id})
RETURN h.id AS id,
       COLLECT { MATCH (h)-[:CITES]->(r:Paper) WHERE NOT r.id IN $excluded
                 RETURN [r.id, r.year] } AS references
