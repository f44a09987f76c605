// Vector index over the papers' title-and-abstract embeddings (all-MiniLM-L6-v2, 384
// dimensions, unit vectors): the dense half of the query's own seed search.
CREATE VECTOR INDEX paper_embedding IF NOT EXISTS FOR (p:Paper) ON p.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}
