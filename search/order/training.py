"""Training the learned ranking from a corpus's own citations, with no labels: a paper's
title and first two abstract sentences are a query and its in-corpus references are the
answer, the way the benchmark query sets are built (../shared/data/README.md).

Each training query runs the search's own stages up to its candidates (search/stages.py:
seeds, the neighbourhood, the walk's weights and the walk, the text lists; then the
candidates' features, search/order/features.py) with its source paper excluded, which
leaves that paper out with all its edges, exactly as the benchmark hides a query's source;
nothing is recorded. A query on a thin graph, which the search orders by the query's text
ranking instead of the model (search/stages.py: thin_graph_gate, the one gate a training
query can meet, since every form trained has its model), teaches nothing and is left out.
The source's references are read once, as the answer, and never reach the features.

Each source paper is asked in every query form a model is trained for (search/order/model.py:
ORDER_FORMS): `text`, its title and two sentences; `words`, its title alone (where the
title has fewer than MIN_QUERY_WORDS words; a longer one is a `text` query); `papers`,
GIVEN_PAPERS of its references drawn with the seed, once alone and once with the title,
the rest of its references the answer (the given papers are never candidates); `idea`,
one sentence of its abstract drawn with the seed (as CSFCube asks a query paper's
background, method or result sentence).

Each form's model is LightGBM's LambdaRank (models/lambdarank.py), fit on that form's
queries alone: one group of candidates per query, 1 for each of its relevant candidates.
Queries whose candidates hold no relevant paper teach nothing and are left out of the fit
(counted in the description). The same queries and settings give the same files to the
byte.
"""

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.graph import Graph
from crase.models.lambdarank import DEFAULT_PARAMS, Group, LambdaRankParams, fit
from crase.scoring.tex import plain_text
from crase.search.order.features import FEATURES, Candidates
from crase.search.order.model import OrderModel, OrderModels
from crase.search.request import ORDER_FORMS, SearchRequest, query_form
from crase.search.roles.protocols import SearchBackends
from crase.search.stages import (
    Search,
    SearchState,
    candidates_of,
    gather_evidence,
    thin_graph_gate,
)
from crase.settings import SearchSettings

# The features a model is trained on unless told otherwise: all but the walk's score and
# its reached flag. The walk's rank carries the walk's order, and its value for a paper
# the walk never reached says the same as the flag; the score's scale follows the graph's
# size and density. Trained on hep-th's dense graphs, a model leaned on the score where
# cs768's sparse graph makes it mislead: without the two, cs768 dev R@50 0.555 against
# 0.535, hep-th 0.500 against 0.501 (docs/retrieval-quality.md).
DEFAULT_FEATURES: tuple[str, ...] = tuple(
    name for name in FEATURES if name not in ("walk_log_score", "walk_reached"))
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
QUERY_SENTENCES = 2  # abstract sentences after the title, as in the benchmark sets
GIVEN_PAPERS = 3  # references a `papers` training query starts from, as in the benchmark
IDEA_MIN_WORDS = 8  # an abstract sentence shorter than this says too little to be an idea
FORM_QUERIES = {
    "text": f"title and first {QUERY_SENTENCES} abstract sentences",
    "words": "title alone (fewer than 12 words)",
    "papers": f"{GIVEN_PAPERS} of the source's references given, once without text and "
              "once with the title",
    "idea": f"one abstract sentence of {IDEA_MIN_WORDS} words or more, drawn with the seed",
}


@dataclass(frozen=True)
class TrainingQuery:
    source_id: str
    text: str
    year: int | None
    answer: frozenset[str]  # the source's in-corpus references, less the given papers
    given: tuple[str, ...] = ()  # papers the query starts from
    title: str = ""
    abstract: str = ""
    asked_as: str | None = None  # a form the caller names (idea); None: query_form's

    @property
    def form(self) -> str:
        return self.asked_as or query_form(self.text, self.given)


@dataclass(frozen=True)
class TrainingExample:
    """One training query's candidates, with 1 for each relevant candidate."""

    query: TrainingQuery
    candidates: Candidates
    labels: NDArray[np.float64]


def query_text(title: str, abstract: str, sentences: int = QUERY_SENTENCES) -> str:
    """The title and the first `sentences` sentences of the abstract, as one query."""
    head = " ".join(SENTENCE_END.split(" ".join(abstract.split()))[:sentences])
    title = " ".join(title.split()).rstrip(".")
    return f"{title}. {head}".strip()


def read_training_queries(graph: Graph, before_year: int, count: int, seed: int,
                          min_references: int = 5, held_out: frozenset[str] = frozenset(),
                          from_year: int | None = None) -> list[TrainingQuery]:
    """`count` source papers published before `before_year` (and from `from_year` on, when
    given), with at least `min_references` in-corpus references each, drawn at random with
    `seed`; papers in `held_out` (a benchmark's source papers) are never drawn."""
    rows = [row for row in graph.read("read_training_papers", before_year=before_year,
                                      from_year=from_year, min_references=min_references)
            if row["id"] not in held_out]
    generator = np.random.default_rng(seed)
    picked = sorted(generator.choice(len(rows), size=min(count, len(rows)), replace=False))
    return [TrainingQuery(rows[i]["id"], query_text(rows[i]["title"], rows[i]["abstract"]),
                          rows[i]["year"], frozenset(rows[i]["references"]),
                          title=" ".join(rows[i]["title"].split()).rstrip("."),
                          abstract=" ".join(rows[i]["abstract"].split()))
            for i in picked]


def in_forms(queries: Sequence[TrainingQuery], forms: Sequence[str], seed: int
             ) -> list[TrainingQuery]:
    """Each source paper's query in every form of `forms` (a title of 12 words or more
    makes no `words` query); the given papers and the idea sentences are drawn with
    `seed`, each form from its own generator, so the forms trained together never change
    one another's draw."""
    papers_draw, idea_draw = np.random.default_rng(seed), np.random.default_rng([seed, 1])
    asked = []
    for query in queries:
        if "text" in forms:
            asked.append(query)
        if "words" in forms and query_form(query.title, ()) == "words":
            asked.append(replace(query, text=query.title))
        if "papers" in forms and len(query.answer) > GIVEN_PAPERS:
            given = tuple(sorted(papers_draw.choice(sorted(query.answer), GIVEN_PAPERS,
                                                    replace=False)))
            rest = query.answer - set(given)
            asked += [replace(query, text="", given=given, answer=rest),
                      replace(query, text=query.title, given=given, answer=rest)]
        if "idea" in forms and (sentences := idea_sentences(query.abstract)):
            sentence = sentences[int(idea_draw.integers(len(sentences)))]
            asked.append(replace(query, text=sentence, asked_as="idea"))
    return asked


def idea_sentences(abstract: str) -> list[str]:
    """The abstract's sentences long enough to describe an idea, its TeX as plain text
    (as a person would type the idea)."""
    text = " ".join(plain_text(abstract).split())
    return [s for s in SENTENCE_END.split(text) if len(s.split()) >= IDEA_MIN_WORDS]


def training_search(graph: Graph, backends: SearchBackends, params: SearchSettings,
                    query: str, excluded: list[str], given: Sequence[str] = ()
                    ) -> tuple[Search, SearchState]:
    """A learned-order search with `params` for `query` (from the `given` papers) through
    the search's own stages up to its walk (search/stages.py), the `excluded` papers
    hidden, nothing recorded."""
    search = Search(graph, backends, SearchRequest(
        query=query, params=params.model_copy(update={"order": "learned"}), exclude=excluded,
        given_papers=list(given)))
    return search, gather_evidence(search)


def hidden_as_of(graph: Graph, before_year: int) -> list[str]:
    """Every paper published in `before_year` or later: a training search sees the graph
    as it was before then, so no benchmark query paper of those years (held out or not)
    and no edge of one reaches a model."""
    return [row["id"] for row in graph.read("read_paper_ids_from_year", year=before_year)]


def training_example(graph: Graph, backends: SearchBackends, params: SearchSettings,
                     query: TrainingQuery, hidden: Sequence[str] = ()
                     ) -> TrainingExample | None:
    """The query's candidates with its source paper and the `hidden` papers (hidden_as_of)
    left out with every edge of theirs; None on a thin graph, where the query's text
    ranking orders the list (thin_graph_gate)."""
    search, state = training_search(graph, backends, params, query.text,
                                    [query.source_id, *hidden], query.given)
    if thin_graph_gate(search, state) is not None:
        return None
    return labelled(candidates_of(search, state), query)


def labelled(candidates: Candidates, query: TrainingQuery) -> TrainingExample:
    """The candidates, labelled by the query's answer."""
    labels = np.array([float(p in query.answer) for p in candidates.ids])
    return TrainingExample(query, candidates, labels)


def how_drawn(corpus: str, queries: int, before_year: int, from_year: int | None, seed: int,
              forms: Sequence[str], held_out: Sequence[str]) -> dict[str, Any]:
    """How the training queries were drawn, with the `crase train-order` command that
    draws them again, for a model's description (the benchmark's `collect` draws the
    same queries through the same path, so a model it fits says the same)."""
    from_flag = f" --from-year {from_year}" if from_year is not None else ""
    return {"before_year": before_year, "from_year": from_year, "seed": seed,
            "held_out_query_files": list(held_out),
            "command": f"crase train-order --corpus {corpus} --queries {queries} "
                       f"--before-year {before_year}{from_flag} --seed {seed} "
                       f"--forms {' '.join(forms)}"
                       + "".join(f" --hold-out {name}" for name in held_out)}


def train_order_model(examples: Sequence[TrainingExample], name: str, corpus: str,
                      settings: dict[str, Any], features: Sequence[str] = DEFAULT_FEATURES,
                      params: LambdaRankParams = DEFAULT_PARAMS) -> OrderModels:
    """One model per query form the examples hold, fit on that form's examples alone."""
    forms = [form for form in ORDER_FORMS if any(e.query.form == form for e in examples)]
    if not forms:
        raise ValueError("no training query: draw some with `crase train-order --queries`")
    return OrderModels(name, {form: form_model(
        [e for e in examples if e.query.form == form], form, name, corpus, settings,
        features, params) for form in forms})


def form_model(examples: Sequence[TrainingExample], form: str, name: str, corpus: str,
               settings: dict[str, Any], features: Sequence[str],
               params: LambdaRankParams) -> OrderModel:
    """The model fit on one form's `examples`, described by the training data it saw: the
    corpus, every source paper with its year, and how the queries were drawn."""
    columns = [FEATURES.index(f) for f in features]
    ranking = fit([Group(e.candidates.values[:, columns], e.labels) for e in examples],
                  features, params)
    sources = sorted((e.query.source_id, e.query.year) for e in examples)
    years = [year for _, year in sources if year is not None]
    description = {
        "corpus": corpus,
        "queries": len(examples),
        "queries_with_a_relevant_candidate": sum(int(e.labels.sum() > 0) for e in examples),
        "source_year_min": min(years, default=None),
        "source_year_max": max(years, default=None),
        "query": f"{FORM_QUERIES[form]}; answer: the source's in-corpus references"
                 f"{' less the given papers' if form == 'papers' else ''}; source paper and "
                 "its edges hidden",
        "learner": {"library": "lightgbm", **asdict(params)},
        "feature_gain": ranking.importances(),
        "sources_sha256": hashlib.sha256(
            "\n".join(s for s, _ in sources).encode()).hexdigest(),
        "sources": [[source, year] for source, year in sources],
        **settings,
    }
    return OrderModel(name, form, ranking, description)


def gather_examples(graph: Graph, backends: SearchBackends, params: SearchSettings,
                    queries: Sequence[TrainingQuery], hidden: Sequence[str] = (),
                    progress: Callable[[int, int], None] | None = None
                    ) -> list[TrainingExample]:
    """The training example of every query the search orders by the model, the `hidden`
    papers left out of every search."""
    examples = []
    for done, query in enumerate(queries, start=1):
        if (example := training_example(graph, backends, params, query, hidden)) is not None:
            examples.append(example)
        if progress:
            progress(done, len(queries))
    return examples
