"""One Cypher query per `.cypher` file (schema/ and analyst/ included) and the loader that
reads them by name; `crase.graph.Graph` runs them.

May import: `crase.errors` only.
"""
