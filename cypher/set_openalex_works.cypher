// Record on each paper the OpenAlex work it was grown from: the work's id, the ids its
// reference list names (kept, so that edges to works that join the graph later are drawn
// without asking again), the route it first came by, and when.
// Parameters: $rows (list of {id, openalex_id, reference_ids, route, fetched_at}).
// Returns: written (count of rows whose paper exists).
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
SET p.openalex_id = coalesce(p.openalex_id, row.openalex_id),
    p.openalex_reference_ids = row.reference_ids,
    p.openalex_route = coalesce(p.openalex_route, row.route),
    p.openalex_fetched_at = row.fetched_at
RETURN count(*) AS written
