// One page of runs, newest first, optionally of one kind.
// Parameters: $kind (a run kind, or null for all), $skip, $limit.
// Returns: id, kind, query, status, started, finished (ISO strings or null), error,
//          results (how many papers the run returned).
MATCH (r:Run)
WHERE $kind IS NULL OR r.kind = $kind
WITH r ORDER BY r.started DESC, r.id SKIP $skip LIMIT $limit
RETURN r.id AS id, r.kind AS kind, r.query AS query, r.status AS status,
       toString(r.started) AS started, toString(r.finished) AS finished, r.error AS error,
       COUNT { (r)-[:RETURNED]->() } AS results
