// Store the whole report of an evolution, citation-gap or landscape run on its Run node.
// Parameters: $id (run id), $report (JSON string).
// Returns: id.
MATCH (r:Run {id: $id})
SET r.report = $report
RETURN r.id AS id
