// How a run ended beyond its status: an idea run's outcome ('done', 'partial',
// 'ranking_failed', 'failed', 'cancelled'), null for a search or a run still going.
// Parameters: $id (run id).
// Returns: outcome.
MATCH (r:Run {id: $id})
RETURN r.outcome AS outcome
