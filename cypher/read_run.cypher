// One Run node as the API shows it (JSON fields stay strings; the API parses them).
// Parameters: $id (run id).
// Returns: id, kind, query, status, params, backends, plan, counts, timings, usage, error,
//          started, finished (ISO strings or null).
MATCH (r:Run {id: $id})
RETURN r.id AS id, r.kind AS kind, r.query AS query, r.status AS status, r.params AS params,
       r.backends AS backends, r.plan AS plan, r.counts AS counts, r.timings AS timings,
       r.usage AS usage, r.error AS error, toString(r.started) AS started,
       toString(r.finished) AS finished
