// The stored audit of one idea run.
// Parameters: $id (run id).
// Returns: id, kind, status, outcome, audit (JSON string or null), audit_path.
MATCH (r:Run {id: $id})
WHERE r.kind = 'idea'
RETURN r.id AS id, r.kind AS kind, r.status AS status, r.outcome AS outcome,
       r.audit AS audit, r.audit_path AS audit_path
