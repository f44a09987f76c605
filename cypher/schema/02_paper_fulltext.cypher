// Full-text index over title and abstract: the default seed search (BM25-like Lucene scoring).
CREATE FULLTEXT INDEX paper_text IF NOT EXISTS FOR (p:Paper) ON EACH [p.title, p.abstract]
