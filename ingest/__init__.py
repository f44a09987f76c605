"""Getting papers in: corpus readers and validation, the batch loader and the bulk
importer, rejects and checkpoints, one client module per external API (Semantic Scholar,
Crossref, arXiv), PDF text, and the paper embeddings behind the vector index.

May import: `crase` (core), `crase.scoring` and `crase.models`.
"""
