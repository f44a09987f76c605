// Mark an open Run alive: the process running it (its owner) and a heartbeat on the
// database's clock, the one clock every server compares against (close_stale_runs).
// Parameters: $id, $owner (string: host:pid:random of the process).
// Returns: id (no row once the Run is closed: a closed run is never marked again).
MATCH (r:Run {id: $id})
WHERE r.status IN ['running', 'queued']
SET r.owner = $owner, r.heartbeat = datetime()
RETURN r.id AS id
