// Put the publisher's own signals on citation edges already loaded (the Semantic Scholar
// citations dataset: whether the citation is influential, and the intents it was cited
// with), so the walk can use them as an edge weight.
// Parameters: $rows (list of {citing, cited: paper ids, isinfluential: boolean or null,
//             intents: list of strings}).
// Returns: written (count of edges found and set).
UNWIND $rows AS row
MATCH (:Paper {id: row.citing})-[r:CITES]->(:Paper {id: row.cited})
SET r.isinfluential = row.isinfluential, r.intents = row.intents
RETURN count(r) AS written
