"""The rules of the Crase method, as plain functions over numbers: what a claim is,
coverage affinity Delta, pruning, the age weight, SALSA, LaTeX clean-up. Each rule has one
home here; where Cypher repeats one on the hot path, a test checks that the two agree.

May import: nothing of the project (numpy only), so every caller can use the rules.
"""
