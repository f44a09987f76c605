"""Idea to prior work, the Idea2Prior pipeline: facets, multi-route discovery, identity,
assessment, the citation-neighbour gate, the shortlist, PDF evidence windows, one
validated expert ranking and the audit. Its model roles are in `idea/roles/`.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
