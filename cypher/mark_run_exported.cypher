// Note that a Run was exported (`crase export`, GET /runs/{id}/export): an exported run is
// never pruned, since a reference manager may hold its ids. The first export's time stays.
// Parameters: $id, $exported (ISO).
// Returns: id.
MATCH (r:Run {id: $id})
SET r.exported = coalesce(r.exported, datetime($exported))
RETURN r.id AS id
