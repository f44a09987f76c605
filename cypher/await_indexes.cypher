// Wait until every index is online (after a bulk import the full-text index populates).
// Parameters: $seconds (how long to wait at most).
// Returns: nothing.
CALL db.awaitIndexes($seconds)
