"""The shared core, used by every other folder: settings, named errors, the graph client,
the Neo4j launcher, usage accounting, the HTTP retry policy and the run lifecycle.

May import: `crase.cypher` (the graph client loads its queries) and nothing else of the
project, so every folder can build on it.
"""
