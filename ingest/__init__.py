"""Getting papers in: corpus readers and validation, the batch loader and the bulk
importer, rejects and checkpoints, one client module per external API (Semantic Scholar,
Crossref, arXiv), PDF text, and the paper embeddings behind the vector index.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
