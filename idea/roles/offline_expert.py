"""The offline expert of the idea workflow, used where no model endpoint is configured;
deterministic, named "offline-..." so it is never mistaken for a model.

- Expert (`offline-expert-fused@3`): a deterministic scorer, not a model. The shortlist is
  ranked by each signal: idea-abstract cosine (title only when there is no abstract), the
  work's place in the idea's own text ranking over the corpus (BM25 and embeddings fused,
  as the search ranks a query; top 200), BM25 of the idea's terms within the shortlist,
  the grade (when graded), and the best cosine of the idea and a supplied PDF window (when
  windows were supplied); the rankings are fused by reciprocal rank, the cosine and the
  text rank weighing 1 and the others 0.5 each (the fusion and weights of the search's own
  text ranking, search/text_ranking.py). A work without a signal is left out of that
  ranking, not put last. Top min(5, n) by fused score, ties by shortlist order; its reply
  passes the same validation as a model's. Hit@5 on CSFCube: 0.674 with the earlier
  weighted mean of scores, 0.744 with the fusion, 0.791 with the text rank added.
- With a learned final order (idea/final_order/model.py; the default), the works are ordered
  by its score over the fused score, the idea-abstract cosine and the work's citation
  links to the idea's seeds, ties by the fused score; the backend is then named
  `offline-expert-learned@1:<model>`, so the audit says which model ordered the five.
"""

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from crase.idea.expert import ExpertOutcome, check_and_build, failed_outcome
from crase.idea.final_order.model import FinalOrderModel, feature_rows
from crase.idea.roles import model_calls
from crase.idea.roles.offline_assessor import paper_text
from crase.idea.selection import bm25_scores
from crase.idea.structuring import IdeaStructure
from crase.idea.terms import content_stems
from crase.ingest.records import PaperRecord
from crase.models.chat import ModelRunner
from crase.models.embedding_cache import TextEncoder
from crase.prompts.replies import allowed_source
from crase.search.text_ranking import BM25_WEIGHT, fuse

EXPERT = "offline-expert-fused@3"
LEARNED_EXPERT = "offline-expert-learned@1"
# Weights of the offline expert's rankings in the reciprocal-rank fusion.
EXPERT_WEIGHTS = {"similarity": 1.0, "text_rank": 1.0, "lexical": BM25_WEIGHT,
                  "grade": BM25_WEIGHT, "fulltext": BM25_WEIGHT}


class OfflineExpert:
    """A documented deterministic scorer standing in for the expert model."""

    def __init__(self, encoder: TextEncoder, order: FinalOrderModel | None = None) -> None:
        self.encoder = encoder
        self.order = order
        self.name = f"{LEARNED_EXPERT}:{order.name}" if order else EXPERT

    def rank(self, runner: ModelRunner, structure: IdeaStructure,
             entries: Sequence[model_calls.ShortlistEntry]) -> ExpertOutcome:
        if not entries:
            return failed_outcome(self.name, "missing_input", "empty shortlist")
        signals = self.signals(structure, entries)
        self.add_learned_scores(signals, entries)
        order = sorted(range(len(entries)), key=lambda i: (
            -signals[i].get("learned", 0.0), -signals[i]["score"], i))
        count = min(5, len(entries))
        reply = {"candidates": [
            {"rank": rank, "paper_id": entries[i].paper.id,
             "expert_reason": describe(signals[i]),
             "evidence_source": allowed_source(entries[i].supplied)}
            for rank, i in enumerate(order[:count], start=1)]}
        return check_and_build(self.name, json.dumps(reply), entries)

    @staticmethod
    def learned_rows(signals: list[dict[str, Any]],
                     entries: Sequence[model_calls.ShortlistEntry]) -> np.ndarray:
        """The learned final order's rows (idea/final_order/model.py) of the shortlist."""
        return feature_rows([s["score"] for s in signals],
                            [s["parts"]["similarity"] for s in signals],
                            [e.neighbour_links for e in entries])

    def add_learned_scores(self, signals: list[dict[str, Any]],
                           entries: Sequence[model_calls.ShortlistEntry]) -> None:
        """Each work's score under the learned final order, where there is one."""
        if self.order is None:
            return
        for signal, entry, learned in zip(signals, entries,
                                          self.order.scores(self.learned_rows(signals, entries)),
                                          strict=True):
            signal["learned"] = float(learned)
            signal["neighbour_links"] = entry.neighbour_links

    def signals(self, structure: IdeaStructure,
                entries: Sequence[model_calls.ShortlistEntry]) -> list[dict[str, Any]]:
        texts = [paper_text(PaperRecord(id=e.paper.id, title=e.paper.title,
                                        abstract=e.paper.abstract or "")) for e in entries]
        windows = [(i, w.text) for i, e in enumerate(entries) for w in e.windows]
        vectors = self.encoder.encode([structure.idea, *texts, *(text for _, text in windows)])
        idea = vectors[0]
        similarity = vectors[1:len(entries) + 1] @ idea
        window_sims = vectors[len(entries) + 1:] @ idea if windows else np.zeros(0)
        best_window: dict[int, tuple[float, int]] = {}
        for (i, _), sim, window in zip(windows, window_sims,
                                       [w for e in entries for w in e.windows], strict=True):
            if i not in best_window or sim > best_window[i][0]:
                best_window[i] = (float(sim), window.page)
        lexical = bm25_scores(structure.idea_terms(), [content_stems(t) for t in texts])
        top = max(lexical, default=0.0) or 1.0
        results = []
        for i, entry in enumerate(entries):
            grade_value = (entry.assessment or {}).get("grade")
            parts = {"similarity": max(float(similarity[i]), 0.0), "lexical": lexical[i] / top}
            if isinstance(grade_value, int):
                parts["grade"] = grade_value / 3
            if i in best_window:
                parts["fulltext"] = max(best_window[i][0], 0.0)
            if entry.text_rank is not None:
                parts["text_rank"] = 1.0 / entry.text_rank  # higher is better, as the others
            results.append({"parts": parts, "grade": grade_value, "text_rank": entry.text_rank,
                            "covered": (entry.assessment or {}).get("covered_facets") or [],
                            "has_abstract": entry.paper.has_abstract,
                            "window_page": best_window.get(i, (0.0, None))[1]})
        fused = dict(fuse([signal_ranking(results, name) for name in EXPERT_WEIGHTS],
                          list(EXPERT_WEIGHTS.values())))
        for i, signal in enumerate(results):
            signal["score"] = fused.get(str(i), 0.0)
        return results


def signal_ranking(signals: list[dict[str, Any]], name: str) -> list[str]:
    """Positions (as strings) of the works that have signal `name`, best first, ties by
    shortlist order."""
    present = [i for i, s in enumerate(signals) if name in s["parts"]]
    return [str(i) for i in sorted(present, key=lambda i: (-signals[i]["parts"][name], i))]


def describe(signal: dict[str, Any]) -> str:
    parts = signal["parts"]
    basis = "idea-abstract" if signal["has_abstract"] else "idea-title (no abstract)"
    learned = (f"Learned final order score {signal['learned']:.4f} from "
               f"{signal['neighbour_links']} citation link(s) to the idea's seeds and the "
               if "learned" in signal else "")
    first = (f"{learned}{'o' if learned else 'O'}ffline fused rank score "
             f"{signal['score']:.4f}: {basis} cosine "
             f"{parts['similarity']:.2f}, lexical {parts['lexical']:.2f}")
    if "grade" in parts:
        covered = ", ".join(signal["covered"]) or "no facet"
        first += f", grade {signal['grade']} covering {covered}"
    if signal["text_rank"] is not None:
        first += f", rank {signal['text_rank']} in the idea's own text ranking"
    second = (f"Best PDF window on page {signal['window_page']} has cosine "
              f"{parts['fulltext']:.2f}." if "fulltext" in parts
              else "No PDF window was supplied, which counts neither for nor against it.")
    return f"{first}. {second}"
