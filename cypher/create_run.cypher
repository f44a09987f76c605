// Open a Run node for a search or idea run.
// Parameters: $id, $kind ('search' | 'idea'), $query, $params (JSON string), $started (ISO),
//             $backends (JSON string: which backend served each role).
// Returns: id.
CREATE (r:Run {id: $id, kind: $kind, query: $query, params: $params, status: 'running',
               started: datetime($started), backends: $backends})
RETURN r.id AS id
