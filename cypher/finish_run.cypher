// Close a Run: status, plan, counts, per-stage timings, model usage, and an error if any.
// Parameters: $id, $status ('done' | 'failed' | 'cancelled'), $plan (list of strings),
//             $counts, $timings, $usage (JSON strings), $error (string or null),
//             $finished (ISO).
// Returns: id.
MATCH (r:Run {id: $id})
SET r.status = $status, r.plan = $plan, r.counts = $counts, r.timings = $timings,
    r.usage = $usage, r.error = $error, r.finished = datetime($finished)
RETURN r.id AS id
