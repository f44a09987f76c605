"""Evidence-graph search, the Crase pipeline: seeds from the query's own text ranking, the
1.5-hop neighbourhood, claims and Delta on every edge, pruning, the personalized walk on
GDS, and the evidence that kept each paper; the papers a search starts from, resolved to
graph papers; the query-set files the benchmarks and the learned order's training read.
Its model roles (protocols, model and offline adapters, the choice between them) are in
`search/roles/`; its learned order (features, model, trainer, shipped model) in
`search/order/`.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
