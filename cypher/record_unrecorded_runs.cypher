// Record runs the database missed while it was away: the close of a failed run, or a run that
// never got its Run node (queued when the database went away, cancelled before it started).
// A Run already closed is left as it is.
// Parameters: $rows (list of {id, kind, query, params (JSON string), status, error}),
//             $finished (ISO).
// Returns: id of each Run recorded.
UNWIND $rows AS row
MERGE (r:Run {id: row.id})
  ON CREATE SET r.kind = row.kind, r.query = row.query, r.params = row.params,
                r.backends = '{}', r.status = 'queued'
WITH r, row
WHERE r.status IN ['running', 'queued']
SET r.status = row.status, r.error = row.error, r.finished = datetime($finished)
RETURN r.id AS id
