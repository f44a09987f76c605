// How many of the given papers are in the graph with every property the load gave them:
// whether a finished load's papers are still there whole (a later import may have
// replaced the database, or a property may have been removed since).
// Parameters: $rows (list of {id: paper id, keys: list of property names}).
// Returns: present (count of the given papers found with all their properties).
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
WHERE all(key IN row.keys WHERE p[key] IS NOT NULL)
RETURN count(DISTINCT p) AS present
