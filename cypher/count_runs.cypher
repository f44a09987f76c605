// How many runs there are, optionally of one kind (the runs list's total).
// Parameters: $kind (a run kind, or null for all).
// Returns: total.
MATCH (r:Run)
WHERE $kind IS NULL OR r.kind = $kind
RETURN count(r) AS total
