// End transactions by id (those of a request whose client went away).
// Parameters: $ids (transaction ids from read_request_transactions).
// Returns: id, message (the database's word for each).
TERMINATE TRANSACTIONS $ids
YIELD transactionId, message
RETURN transactionId AS id, message
