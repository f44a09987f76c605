"""The rules of the Crase method, as plain functions over numbers: what a claim is,
coverage affinity Delta, pruning, the age weight, SALSA, LaTeX clean-up. Each rule has one
home here; where Cypher repeats one on the hot path, a test checks that the two agree.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
