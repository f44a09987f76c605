"""Replacement seeds for the seed-corruption stress test (the Crase paper's error analysis):
the seeds a query's clean run used are swapped for as many corrupted ones, and stages 2-3
(expansion, claims, Delta, pruning, ranking) run unchanged.

- Lexically similar distractors: the query's best full-text (BM25) hits that are not in
  its ground truth. They share the query's words, so they sit near the relevant region of
  the citation graph: the lexical-match noise keyword seeding brings in practice.
- Random papers: drawn uniformly from the corpus (ground truth excluded), with a generator
  seeded by the query id, so a rerun draws the same papers.

The query's source paper is never a seed (it is excluded from everything).
"""

import random

from crase.bench.systems import BenchQuery
from crase.graph import Graph
from crase.search.text_ranking import lucene_text

RANDOM_SALT = "crase-seed-corruption"


def distractor_seeds(graph: Graph, query: BenchQuery, count: int) -> list[str]:
    excluded = [query.source_id, *sorted(query.relevant)]
    rows = graph.read("search_papers_fulltext", query=lucene_text(query.text), limit=count,
                      excluded=excluded)
    return [row["id"] for row in rows]


def random_seeds(corpus_ids: list[str], query: BenchQuery, count: int) -> list[str]:
    excluded = query.relevant | {query.source_id}
    pool = [paper for paper in corpus_ids if paper not in excluded]
    generator = random.Random(f"{RANDOM_SALT}:{query.id}")
    return generator.sample(pool, min(count, len(pool)))
