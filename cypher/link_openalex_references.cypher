// Draw the citation edges that the given papers' stored OpenAlex reference lists name
// (openalex_reference_ids), to every graph paper with that OpenAlex id (the
// paper_openalex_id index); an edge already there is kept as it is.
// Parameters: $ids (list of paper ids).
// Returns: written (count of edges matched or created).
UNWIND $ids AS id
MATCH (a:Paper {id: id}) WHERE a.openalex_reference_ids IS NOT NULL
UNWIND a.openalex_reference_ids AS referenceId
MATCH (b:Paper {openalex_id: referenceId}) WHERE b <> a
MERGE (a)-[:CITES]->(b)
RETURN count(*) AS written
