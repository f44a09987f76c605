"""What people use: the HTTP API (Litestar app, routes, background runs, exports, the
analyst's read-only Cypher) and the `crase` command line. Handlers stay thin: the work is
in the pipelines.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
