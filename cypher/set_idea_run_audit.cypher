// Store the whole audit of an idea run on its Run node (JSON string) and where its file is.
// Parameters: $id (run id), $audit (JSON string), $audit_path (string or null),
//             $outcome ('done' | 'partial' | 'ranking_failed' | 'failed' | 'cancelled').
// Returns: id.
MATCH (r:Run {id: $id})
SET r.audit = $audit, r.audit_path = $audit_path, r.outcome = $outcome
RETURN r.id AS id
