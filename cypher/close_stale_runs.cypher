// Close every Run left 'running' or 'queued' whose owner is gone: its heartbeat is older
// than $stale_after_s seconds on the database's clock, or it has none (a Run nobody keeps
// alive, as servers before heartbeats left them). Runs of this process, and the runs this
// server tracks, are left as they are: they are alive by definition.
// Parameters: $keep (list of run ids), $owner (this process's owner id),
//             $stale_after_s (seconds), $error (string), $finished (ISO).
// Returns: id and owner of each Run closed.
MATCH (r:Run)
WHERE r.status IN ['running', 'queued'] AND NOT r.id IN $keep
  AND coalesce(r.owner, '') <> $owner
  AND (r.heartbeat IS NULL OR r.heartbeat < datetime() - duration({seconds: $stale_after_s}))
SET r.status = 'failed', r.error = $error, r.finished = datetime($finished)
RETURN r.id AS id, r.owner AS owner
