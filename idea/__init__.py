"""Idea to prior work, the Idea2Prior pipeline: facets, multi-route discovery, identity,
assessment, the citation-neighbour gate, the shortlist, PDF evidence windows, one
validated expert ranking and the audit. Its model roles are in `idea/roles/`.

May import: `crase`, `crase.scoring`, `crase.prompts`, `crase.models`, `crase.ingest`,
and `crase.search` (an idea is ranked against the corpus as a query is).
"""
