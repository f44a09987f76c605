// Nearest papers to a query embedding (cosine over the `paper_embedding` vector index),
// best first. Returns nothing when no paper has an embedding.
// Parameters: $vector (list of 384 floats), $limit (int), $excluded (list of paper ids).
// Returns: id, title, year, score (cosine similarity mapped to [0, 1] by Neo4j), model (the
// encoder that made the paper's vector).
CALL db.index.vector.queryNodes('paper_embedding', $limit + size($excluded), $vector)
YIELD node, score
WHERE NOT node.id IN $excluded
RETURN node.id AS id, node.title AS title, node.year AS year, score,
       node.embedding_model AS model
ORDER BY score DESC, id
LIMIT $limit
