// Close every Run left 'running' or 'queued' by a server that stopped while it was in flight
// (the API's start-up), except the runs this server works on.
// Parameters: $keep (list of run ids left as they are), $error (string), $finished (ISO).
// Returns: id of each Run closed.
MATCH (r:Run)
WHERE r.status IN ['running', 'queued'] AND NOT r.id IN $keep
SET r.status = 'failed', r.error = $error, r.finished = datetime($finished)
RETURN r.id AS id
