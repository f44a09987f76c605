// Record that a paper's Semantic Scholar lists were fetched: when, and for the reference
// list the S2 ids it names (kept, so that edges to papers that join the graph later can be
// drawn without asking again). A value absent from a row leaves the stored one.
// Parameters: $rows (list of {id, s2_id, references_at, reference_ids, citations_at};
//             any but id may be null).
// Returns: written (count of rows whose paper exists).
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
SET p.s2_id = coalesce(p.s2_id, row.s2_id),
    p.s2_references_at = coalesce(row.references_at, p.s2_references_at),
    p.s2_reference_ids = coalesce(row.reference_ids, p.s2_reference_ids),
    p.s2_citations_at = coalesce(row.citations_at, p.s2_citations_at)
RETURN count(*) AS written
