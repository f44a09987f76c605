"""Evidence-graph search, the Crase pipeline: seeds from the query's own text ranking, the
1.5-hop neighbourhood, claims and Delta on every edge, pruning, the personalized walk on
GDS, and the evidence that kept each paper. Its model roles (protocols, model and offline
adapters, the choice between them) are in `search/roles/`; its learned order (features,
model, trainer, shipped model) in `search/order/`.

May import: `crase`, `crase.scoring`, `crase.prompts`, `crase.models`, `crase.ingest`.
"""
