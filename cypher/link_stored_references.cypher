// Draw every citation edge among the given papers that their stored Semantic Scholar
// reference lists name (s2_reference_ids, matched by the s2_id index); an edge already
// there is kept as it is.
// Parameters: $ids (list of paper ids).
// Returns: written (count of edges matched or created).
UNWIND $ids AS id
MATCH (a:Paper {id: id}) WHERE a.s2_reference_ids IS NOT NULL
UNWIND a.s2_reference_ids AS referenceId
MATCH (b:Paper {s2_id: referenceId}) WHERE b.id IN $ids AND b <> a
MERGE (a)-[:CITES]->(b)
RETURN count(*) AS written
