"""Training the idea workflow's learned final order (idea/final_order/model.py) from a corpus's
own citations, with no labels: one sentence of a source paper's abstract is the idea (as
CSFCube asks a paper's background, method or result), and the source's in-corpus
references are the answer.

Each training idea runs the whole workflow with the offline backends (run_idea): the
source paper is excluded with its edges, and only papers published up to the source's
year are eligible, so the shortlist holds what the paper's authors could have cited. The
expert's rows for the shortlist (the same `learned_rows` the expert ranks by) and a label
per work (1 for a reference) are kept; the Run each idea writes is deleted again, so
training leaves nothing in the database. A shortlist without a reference teaches
LambdaRank nothing and is left out of the fit. The same ideas give the same file to the
byte.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from crase.graph import Graph
from crase.idea.expert import ExpertOutcome
from crase.idea.pipeline import run_idea
from crase.idea.request import IdeaRequest
from crase.idea.roles import model_calls
from crase.idea.roles.offline_expert import OfflineExpert
from crase.idea.roles.protocols import IdeaBackends
from crase.idea.structuring import IdeaStructure
from crase.models.chat import ModelRunner
from crase.models.lambdarank import Group
from crase.search.order.training import TrainingQuery, idea_sentences
from crase.settings import IdeaSettings


@dataclass(frozen=True)
class TrainingIdea:
    source_id: str
    idea: str
    year: int | None
    answer: frozenset[str]


def training_ideas(queries: Sequence[TrainingQuery], seed: int) -> list[TrainingIdea]:
    """One abstract sentence of each source paper (drawn with `seed`) as its idea; a paper
    without a sentence long enough to describe one is left out."""
    generator = np.random.default_rng(seed)
    ideas = []
    for query in queries:
        sentences = idea_sentences(query.abstract)
        if sentences:
            ideas.append(TrainingIdea(query.source_id,
                                      sentences[int(generator.integers(len(sentences)))],
                                      query.year, query.answer))
    return ideas


class RecordingExpert:
    """The offline expert's fused ranking, keeping the rows it would be ranked by."""

    def __init__(self, expert: OfflineExpert) -> None:
        self.expert = expert
        self.name = expert.name
        self.rows: list[tuple[list[str], np.ndarray]] = []

    def rank(self, runner: ModelRunner, structure: IdeaStructure,
             entries: Sequence[model_calls.ShortlistEntry]) -> ExpertOutcome:
        if entries:
            signals = self.expert.signals(structure, entries)
            self.rows.append(([e.paper.id for e in entries],
                              self.expert.learned_rows(signals, entries)))
        return self.expert.rank(runner, structure, entries)


def shortlist_group(graph: Graph, backends: IdeaBackends, params: IdeaSettings,
                    idea: TrainingIdea) -> Group | None:
    """The idea's shortlist as a training group (None where nothing was shortlisted);
    its Run is deleted once read."""
    assert backends.encoder is not None  # the offline backends hold one
    recorder = RecordingExpert(OfflineExpert(backends.encoder))
    request = IdeaRequest(idea=idea.idea, exclude=[idea.source_id], year_max=idea.year,
                          providers=False, params=params)
    result = run_idea(graph, replace(backends, expert=recorder, runs_dir=None), request)
    graph.write("delete_runs", ids=[result.run_id])
    if not recorder.rows:
        return None
    ids, values = recorder.rows[0]
    return Group(values, np.array([float(pid in idea.answer) for pid in ids]))


def gather_groups(graph: Graph, backends: IdeaBackends, params: IdeaSettings,
                  ideas: Sequence[TrainingIdea],
                  progress: Callable[[int, int], None] = lambda done, total: None
                  ) -> list[Group]:
    groups = []
    for done, idea in enumerate(ideas, start=1):
        group = shortlist_group(graph, backends, params, idea)
        if group is not None:
            groups.append(group)
        progress(done, len(ideas))
    return groups
