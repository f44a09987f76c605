// Delete Runs with their links to papers (the papers stay).
// Parameters: $ids (Run ids).
// Returns: deleted (how many Runs were found and deleted).
UNWIND $ids AS id
MATCH (r:Run {id: id})
DETACH DELETE r
RETURN count(*) AS deleted
