"""The shared core, used by every other folder: settings, named errors, the graph client,
the Neo4j launcher, usage accounting, the HTTP retry policy, the run lifecycle, paper links
and paper identity (DOI, arXiv id and title keys).

May import: `crase.cypher` (the graph client loads its queries) and nothing else of the
project, so every folder can build on it.
"""
