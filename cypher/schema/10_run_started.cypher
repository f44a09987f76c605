// The runs list (newest first) orders by start time.
CREATE INDEX run_started IF NOT EXISTS FOR (r:Run) ON (r.started)
