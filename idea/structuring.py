"""Idea structuring: the idea kept verbatim, 3-7 technical facets, structural features
(data sets, metrics, method families), high-level facets (problem, setting, mechanism,
assumption), search queries and relevance keywords.

These are interpretations that guide search and assessment; they never replace the idea,
which every later stage still receives in full. Each part records which backend wrote it.
With a planner endpoint each part is one model call; a part whose call fails is recorded
as failed and filled by the offline keyphrase structurer, named as such in `sources`.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from crase.idea.roles import model_calls
from crase.idea.terms import content_stems, distinct
from crase.models.chat import ModelFailure, ModelReply, ModelRunner
from crase.settings import IdeaSettings, ModelEndpoint

STRUCTURAL_KEYS = ("datasets", "metrics", "method_families")
HIGH_LEVEL_KEYS = ("problem_facets", "setting_facets", "mechanism_facets", "assumption_facets")


@dataclass
class IdeaStructure:
    idea: str  # verbatim, as the user wrote it
    facets: list[str]
    structural: dict[str, list[str]]
    high_level: dict[str, list[str]]
    queries: list[str]  # for the local full-text index and scholarly providers
    web_queries: list[str] = field(default_factory=list)  # kept for the record
    keywords: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # part -> backend name
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def facet_labels(self) -> list[str]:
        return [f"F{number}" for number in range(1, len(self.facets) + 1)]

    def labelled_facets(self) -> dict[str, str]:
        return dict(zip(self.facet_labels, self.facets, strict=True))

    def idea_terms(self) -> list[str]:
        """Distinct stems of the idea, its facets and keywords: what windows and the local
        score look for. The idea's own words come first."""
        texts = [self.idea, *self.facets, *self.keywords,
                 *(item for key in STRUCTURAL_KEYS for item in self.structural.get(key, []))]
        return distinct(stem for text in texts for stem in content_stems(text))

    def to_audit(self) -> dict[str, Any]:
        return asdict(self) | {"facet_labels": self.facet_labels}


def structure_with_model(
    runner: ModelRunner,
    endpoint: ModelEndpoint,
    idea: str,
    params: IdeaSettings,
    offline: Callable[[str, IdeaSettings], IdeaStructure],
) -> IdeaStructure:
    """Four planner calls; a failed one is recorded and its part taken from `offline`."""
    fallback = offline(idea, params)
    structure = IdeaStructure(idea=idea, facets=[], structural={}, high_level={}, queries=[])
    name = f"model:{endpoint.model}"

    facets = model_calls.derive_facets(runner, endpoint, idea, params.min_facets, params.max_facets)
    if _accept(structure, "facets", facets, fallback, name):
        assert isinstance(facets, ModelReply)
        structure.facets = list(facets.value.facets)
    else:
        structure.facets = fallback.facets

    features = model_calls.extract_structural_features(runner, endpoint, idea)
    if _accept(structure, "structural", features, fallback, name):
        assert isinstance(features, ModelReply)
        structure.structural = {key: list(getattr(features.value, key)) for key in STRUCTURAL_KEYS}
    else:
        structure.structural = fallback.structural

    high = model_calls.derive_high_level_facets(runner, endpoint, idea)
    if _accept(structure, "high_level", high, fallback, name):
        assert isinstance(high, ModelReply)
        structure.high_level = {key: list(getattr(high.value, key)) for key in HIGH_LEVEL_KEYS}
    else:
        structure.high_level = fallback.high_level

    queries = model_calls.generate_search_queries(
        runner, endpoint, idea, model_calls.IdeaFacets(structure.facets), params.max_queries
    )
    if _accept(structure, "queries", queries, fallback, name):
        assert isinstance(queries, ModelReply)
        structure.queries = list(queries.value.bibliographic)
        structure.web_queries = list(queries.value.web)
    else:
        structure.queries, structure.web_queries = fallback.queries, fallback.web_queries
    # Keywords for the neighbour gate and the windows: the facets' and mechanisms' words.
    structure.keywords = fallback.keywords
    structure.sources["keywords"] = fallback.sources.get("keywords", "offline-keyphrases")
    return structure


def _accept(
    structure: IdeaStructure,
    part: str,
    outcome: ModelReply[Any] | ModelFailure,
    fallback: IdeaStructure,
    name: str,
) -> bool:
    if isinstance(outcome, ModelReply):
        structure.sources[part] = f"{name}:{outcome.prompt}"
        return True
    structure.failures.append({"part": part, **outcome.to_record()})
    offline_name = fallback.sources.get(part, "offline-keyphrases")
    structure.sources[part] = f"{offline_name} (after {outcome.kind} of {outcome.prompt})"
    return False
