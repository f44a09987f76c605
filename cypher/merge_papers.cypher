// Create or update papers by id; loading the same rows twice changes nothing.
// Properties absent from a row (unknown) are left as they are on an existing node.
// Parameters: $rows (list of {id, props}; props: title, abstract, year, venue, authors,
//             arxiv_id, doi, s2_id, intro, categories, date, journal_ref where known).
// Returns: written (count of rows).
UNWIND $rows AS row
MERGE (p:Paper {id: row.id})
SET p += row.props
RETURN count(*) AS written
