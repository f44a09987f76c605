// Open a Run node for a search or idea run.
// Parameters: $id, $kind ('search' | 'idea'), $query, $params (JSON string), $started (ISO),
//             $backends (JSON string: which backend served each role),
//             $properties (map: the run's parameters as plain values, e.g. tau, theta, k,
//             so that `MATCH (r:Run) RETURN r.tau` works in Neo4j Browser).
// Returns: id.
CREATE (r:Run {id: $id, kind: $kind, query: $query, params: $params, status: 'running',
               started: datetime($started), backends: $backends})
SET r += $properties
RETURN r.id AS id
