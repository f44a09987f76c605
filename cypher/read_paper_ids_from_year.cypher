// The papers published in $year or later: what a model trained "as of" $year never sees.
// Parameters: $year (int).
// Returns: id, sorted.
MATCH (p:Paper)
WHERE p.year >= $year
RETURN p.id AS id
ORDER BY id
