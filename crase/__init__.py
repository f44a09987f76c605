"""The shared core, used by every other folder: settings, named errors, the graph client,
the Neo4j launcher, usage accounting, the HTTP retry policy, the run lifecycle, paper links,
paper identity (DOI, arXiv id and title keys), reference lists as people bring them
(BibTeX, RIS, CSV, JSON) and the one-line message for a request that does not validate.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
