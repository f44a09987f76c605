// Papers whose title holds a phrase: the candidates of an exact title match, which the
// caller keeps only where the whole normalised title is equal (a phrase also matches a
// longer title that contains it).
// Parameters: $phrase (a Lucene phrase query on the title field, `title:"brane new world"`),
//             $limit (int).
// Returns: id, title, year.
CALL db.index.fulltext.queryNodes('paper_text', $phrase, {limit: $limit})
YIELD node
RETURN node.id AS id, node.title AS title, node.year AS year
