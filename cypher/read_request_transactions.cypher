// The transactions the database runs for one HTTP request: each begun with the request's
// id in its metadata (`crase_request`), so that a request whose client went away can end
// its own work and nothing else.
// Parameters: $request (the request's id).
// Returns: id (a transaction id, as TERMINATE TRANSACTIONS takes it).
SHOW TRANSACTIONS YIELD transactionId, metaData
WHERE metaData.crase_request = $request
RETURN transactionId AS id
