"""The offline assessor of the idea workflow, used where no model endpoint is configured;
deterministic, named "offline-..." so it is never mistaken for a model.

- Assessment and neighbour grades (`offline-minilm-coverage@1`): s = cosine of the idea and
  the title + abstract (all-MiniLM-L6-v2); c = share of facets covered (a facet is covered
  when at least half of its content words occur in the title or abstract). Grade:
  3 if s >= 0.55 and c >= 0.5; 2 if s >= 0.45, or s >= 0.35 and c >= 0.5; 1 if s >= 0.25 or
  c > 0; else 0. task_similarity = s; method_similarity = the share of mechanism terms
  present (the facet share when the idea names no mechanism). No abstract: no grade.
"""

import math
from collections.abc import Sequence

from crase.idea.candidates import Assessment, NeighbourVerdict
from crase.idea.structuring import IdeaStructure
from crase.idea.terms import content_stems, keyphrases
from crase.ingest.records import PaperRecord
from crase.models.chat import ModelRunner
from crase.models.embedding_cache import TextEncoder

ASSESSOR = "offline-minilm-coverage@1"
# Grade thresholds of the offline assessor (cosine of all-MiniLM-L6-v2 unit vectors).
HIGH_SIMILARITY, PARTIAL_SIMILARITY, WEAK_PARTIAL, ADJACENT_SIMILARITY = 0.55, 0.45, 0.35, 0.25
FACET_MAJORITY = 0.5


def paper_text(record: PaperRecord) -> str:
    return f"{record.title}. {record.abstract}" if record.has_abstract else record.title


def covered_facets(structure: IdeaStructure, stems: set[str]) -> list[str]:
    covered = []
    for label, facet in structure.labelled_facets().items():
        facet_stems = set(content_stems(facet))
        if facet_stems and len(facet_stems & stems) >= math.ceil(
                FACET_MAJORITY * len(facet_stems)):
            covered.append(label)
    return covered


def mechanism_stems(structure: IdeaStructure) -> set[str]:
    texts = [*structure.high_level.get("mechanism_facets", []),
             *structure.structural.get("method_families", [])]
    return {s for text in texts for s in content_stems(text)}


def grade(similarity: float, coverage: float) -> int:
    if similarity >= HIGH_SIMILARITY and coverage >= FACET_MAJORITY:
        return 3
    if similarity >= PARTIAL_SIMILARITY or (similarity >= WEAK_PARTIAL
                                            and coverage >= FACET_MAJORITY):
        return 2
    if similarity >= ADJACENT_SIMILARITY or coverage > 0:
        return 1
    return 0


class OfflineAssessor:
    """Also the offline neighbour scorer: the same grade, in the gate's form."""

    name = ASSESSOR

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder

    def assess(self, runner: ModelRunner, structure: IdeaStructure,
               papers: Sequence[PaperRecord]) -> list[Assessment]:
        graded = [p for p in papers if p.has_abstract]
        similarities = self._similarities(structure.idea, graded)
        results = []
        for record in papers:
            if not record.has_abstract:
                results.append(Assessment("no_abstract", note="no abstract: not graded",
                                          assessor=ASSESSOR))
                continue
            results.append(self._assessment(structure, record, similarities[id(record)]))
        return results

    def score(self, runner: ModelRunner, structure: IdeaStructure,
              papers: Sequence[PaperRecord], batch_size: int) -> list[NeighbourVerdict]:
        verdicts = []
        for assessment in self.assess(runner, structure, papers):
            if assessment.status != "assessed":
                verdicts.append(NeighbourVerdict("no_abstract", None, assessment.note, ASSESSOR))
            else:
                verdicts.append(NeighbourVerdict("graded", assessment.score, assessment.note,
                                                 ASSESSOR))
        return verdicts

    def _similarities(self, idea: str, papers: Sequence[PaperRecord]) -> dict[int, float]:
        if not papers:
            return {}
        vectors = self.encoder.encode([idea, *(paper_text(p) for p in papers)])
        sims = vectors[1:] @ vectors[0]
        return {id(p): float(s) for p, s in zip(papers, sims, strict=True)}

    def _assessment(self, structure: IdeaStructure, record: PaperRecord,
                    similarity: float) -> Assessment:
        stems = set(content_stems(paper_text(record)))
        covered = covered_facets(structure, stems)
        coverage = len(covered) / len(structure.facets) if structure.facets else 0.0
        mechanism = mechanism_stems(structure)
        method = len(mechanism & stems) / len(mechanism) if mechanism else coverage
        score = grade(similarity, coverage)
        note = (f"Offline grade {score}: idea-abstract cosine {similarity:.2f} "
                f"(all-MiniLM-L6-v2), {len(covered)} of {len(structure.facets)} facets covered "
                f"by term overlap{' (' + ', '.join(covered) + ')' if covered else ''}.")
        return Assessment(
            "assessed", score, covered, round(max(similarity, 0.0), 4), round(method, 4), note,
            {"keyphrases": keyphrases(paper_text(record))[:5]}, ASSESSOR)
