"""What each model role of the idea workflow must provide, whoever serves it.

The model adapters (crase/idea/roles/model.py: a prompt on the role's OpenAI-compatible
endpoint) and the offline adapters (crase/idea/roles/offline_*.py: deterministic, on the
packaged embedding model) both satisfy these protocols, so the pipeline never knows which
one it runs. Every adapter has a `name` that is written next to what it produced (the Run
node, the audit), so an offline result is never mistaken for a model result. Which adapter
serves each role is chosen in crase/idea/roles/from_settings.py.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crase.idea.candidates import Assessment, Candidate, NeighbourVerdict
from crase.idea.discovery import RecallOutcome
from crase.idea.expert import ExpertOutcome
from crase.idea.report import ReportOutcome
from crase.idea.roles.model_calls import ShortlistEntry
from crase.idea.structuring import IdeaStructure
from crase.ingest.records import PaperRecord
from crase.models.chat import ModelRunner
from crase.models.embedding_cache import TextEncoder
from crase.models.reply_cache import ReplyCache
from crase.settings import IdeaSettings, ProviderSettings


class Structurer(Protocol):
    name: str

    def structure(self, runner: ModelRunner, idea: str, params: IdeaSettings
                  ) -> IdeaStructure: ...


class Recaller(Protocol):
    name: str

    def recall(self, runner: ModelRunner, idea: str, max_papers: int) -> RecallOutcome: ...


class Assessor(Protocol):
    name: str

    def assess(
        self, runner: ModelRunner, structure: IdeaStructure, papers: Sequence[PaperRecord]
    ) -> list[Assessment]:
        """One Assessment per paper, in order; papers without an abstract -> 'no_abstract'."""
        ...


class NeighbourScorer(Protocol):
    name: str

    def score(
        self,
        runner: ModelRunner,
        structure: IdeaStructure,
        papers: Sequence[PaperRecord],
        batch_size: int,
    ) -> list[NeighbourVerdict]:
        """One verdict per paper, in order."""
        ...


class Expert(Protocol):
    name: str

    def rank(self, runner: ModelRunner, structure: IdeaStructure,
             entries: Sequence[ShortlistEntry]) -> ExpertOutcome: ...


class Reporter(Protocol):
    name: str

    def write(self, runner: ModelRunner, structure: IdeaStructure, synthesis: dict[str, Any],
              shortlist: Sequence[Candidate]) -> ReportOutcome: ...


@dataclass
class IdeaBackends:
    """The backend serving each role of one idea run (chosen in from_settings.py), and
    where the run keeps its files and cached replies."""

    structurer: Structurer
    recaller: Recaller
    assessor: Assessor
    neighbour_scorer: NeighbourScorer
    expert: Expert
    reporter: Reporter
    providers: ProviderSettings | None = None  # external providers; None = never probed
    runs_dir: Path | None = None  # where audit files go; None = graph only
    cache: ReplyCache | None = None  # valid model replies reused within and across runs
    # Embeds the idea for its own text ranking (search/text_ranking.py); None: BM25.
    encoder: TextEncoder | None = None

    def names(self) -> dict[str, str]:
        return {"structuring": self.structurer.name, "recall": self.recaller.name,
                "assessment": self.assessor.name, "neighbour_gate": self.neighbour_scorer.name,
                "expert": self.expert.name, "report": self.reporter.name}

    def new_runner(self) -> ModelRunner:
        """A runner with a fresh ledger: one per run, so usage is counted per run."""
        return ModelRunner(cache=self.cache)
