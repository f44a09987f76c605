// The finished Runs the retention rule lets go: past the newest $keep_runs finished runs,
// started before $before, neither starred nor exported. A run still open is never one.
// Parameters: $finished (the finished statuses), $keep_runs, $before (ISO).
// Returns: id, chars (characters of the Run's own text properties: its request summary,
//          counts, timings, usage, audit), links (its relationships to papers).
MATCH (r:Run)
WHERE r.status IN $finished
WITH r ORDER BY r.started DESC, r.id
WITH collect(r) AS runs
UNWIND range(0, size(runs) - 1) AS position
WITH runs[position] AS r, position
WHERE position >= $keep_runs AND r.started < datetime($before)
  AND coalesce(r.starred, false) = false AND r.exported IS NULL
RETURN r.id AS id,
       reduce(total = 0, key IN keys(r) |
              total + CASE WHEN r[key] IS :: STRING THEN size(r[key]) ELSE 0 END) AS chars,
       COUNT { (r)-->() } AS links
