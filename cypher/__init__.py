"""One Cypher query per `.cypher` file (schema/ and analyst/ included) and the loader that
reads them by name; `crase.graph.Graph` runs them.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
