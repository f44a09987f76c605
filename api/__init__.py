"""What people use: the HTTP API (Litestar app, routes, background runs, exports, the
analyst's read-only Cypher) and the `crase` command line. Handlers stay thin: the work is
in the pipelines.

May import: every other folder.
"""
