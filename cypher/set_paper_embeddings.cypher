// Store title-and-abstract embeddings on papers (as float32 vectors the vector index reads).
// Parameters: $rows (list of {id, vector}), $model (encoder name).
// Returns: stored (count).
UNWIND $rows AS row
MATCH (p:Paper {id: row.id})
CALL db.create.setNodeVectorProperty(p, 'embedding', row.vector)
SET p.embedding_model = $model
RETURN count(*) AS stored
