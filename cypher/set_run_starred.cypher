// Star or unstar a Run: a starred run is never pruned (`crase runs prune`).
// Parameters: $id, $starred (boolean).
// Returns: id (no row for an unknown id).
MATCH (r:Run {id: $id})
SET r.starred = $starred
RETURN r.id AS id
