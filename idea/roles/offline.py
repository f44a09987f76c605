"""Offline backends for every idea role, used where no model endpoint is configured. All are
deterministic, and every output carries a name starting with "offline-", so an offline
result is never mistaken for a model's.

- Structuring (`offline-keyphrases`): facets are the idea's RAKE keyphrases (3-7);
  structural features come from small lexicons of metrics and method families and from
  capitalised names next to "dataset", "corpus" or "benchmark" (a short idea's facets are
  padded with the single words of its phrases); high-level facets split the
  idea at its first mechanism marker ("using", "by", "with", "via", "based on"): problem
  phrases before it, mechanism phrases after it; queries are the idea's content words, each
  multi-word facet, and pairs of the top facets.
- Recall (`offline-none`): recalls nothing; the route is skipped with that reason.
- Assessment and neighbour grades (`offline-minilm-coverage@1`): s = cosine of the idea and
  the title + abstract (all-MiniLM-L6-v2); c = share of facets covered (a facet is covered
  when at least half of its content words occur in the title or abstract). Grade:
  3 if s >= 0.55 and c >= 0.5; 2 if s >= 0.45, or s >= 0.35 and c >= 0.5; 1 if s >= 0.25 or
  c > 0; else 0. task_similarity = s; method_similarity = the share of mechanism terms
  present (the facet share when the idea names no mechanism). No abstract: no grade.
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
- Report (`offline-report-template@1`): the synthesis laid out in the report's sections.
"""

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from crase.idea.candidates import Assessment, Candidate, PaperRecord
from crase.idea.discovery import RecallOutcome
from crase.idea.expert import ExpertOutcome, check_and_build, failed_outcome
from crase.idea.neighbour_gate import NeighbourVerdict
from crase.idea.report import ReportOutcome, report_headings
from crase.idea.roles import model_calls
from crase.idea.selection import bm25_scores
from crase.idea.structuring import HIGH_LEVEL_KEYS, IdeaStructure
from crase.idea.terms import content_stems, content_words, distinct, keyphrases, stem
from crase.models.chat import ModelRunner
from crase.models.embedding_cache import TextEncoder
from crase.prompts.replies import allowed_source
from crase.search.text_ranking import BM25_WEIGHT, fuse
from crase.settings import IdeaSettings

STRUCTURER = "offline-keyphrases"
ASSESSOR = "offline-minilm-coverage@1"
EXPERT = "offline-expert-fused@3"
REPORTER = "offline-report-template@1"

# Grade thresholds of the offline assessor (cosine of all-MiniLM-L6-v2 unit vectors).
HIGH_SIMILARITY, PARTIAL_SIMILARITY, WEAK_PARTIAL, ADJACENT_SIMILARITY = 0.55, 0.45, 0.35, 0.25
FACET_MAJORITY = 0.5
# Weights of the offline expert's rankings in the reciprocal-rank fusion.
EXPERT_WEIGHTS = {"similarity": 1.0, "text_rank": 1.0, "lexical": BM25_WEIGHT,
                  "grade": BM25_WEIGHT, "fulltext": BM25_WEIGHT}

MECHANISM_MARKER = re.compile(r"\b(using|uses|use|by|with|via|through|based on|relying on)\b",
                              re.IGNORECASE)
ASSUMPTION_MARKER = re.compile(r"\b(assum\w*|without|given|provided that|no)\b", re.IGNORECASE)
DATASET_WORD = re.compile(r"\b(datasets?|corpus|corpora|benchmarks?|treebank)\b", re.IGNORECASE)
NAME = re.compile(r"\b[A-Za-z]*[A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9\-]*\b")
# Lower-case entries match in any case; entries with capitals (acronyms) match as written,
# so "maps" is not mAP and "organ" is not GAN.
METRICS = ("accuracy", "precision", "recall", "F1", "f-score", "f-measure", "BLEU", "ROUGE",
           "METEOR", "perplexity", "AUC", "mAP", "MRR", "NDCG", "WER", "error rate", "RMSE",
           "MAE", "IoU", "PSNR", "SSIM", "hit rate", "exact match")
METHOD_FAMILIES = (
    "transformer", "attention", "BERT", "CNN", "convolutional neural network", "RNN", "LSTM",
    "recurrent neural network", "GAN", "generative adversarial network", "diffusion",
    "variational autoencoder", "autoencoder", "graph neural network", "GNN", "CRF",
    "conditional random field", "HMM", "hidden markov model", "SVM", "support vector machine",
    "reinforcement learning", "bootstrapping", "topic model", "LDA", "word embeddings",
    "language model", "knowledge distillation", "contrastive learning", "meta-learning",
    "active learning", "transfer learning", "semi-supervised learning", "clustering",
    "decision tree", "random forest", "logistic regression", "bayesian", "pagerank",
    "integer linear programming", "beam search", "dynamic programming", "kernel",
)


class OfflineStructurer:
    name = STRUCTURER

    def structure(self, runner: ModelRunner, idea: str, params: IdeaSettings) -> IdeaStructure:
        return structure_offline(idea, params)


def structure_offline(idea: str, params: IdeaSettings) -> IdeaStructure:
    facets = choose_facets(idea, params.min_facets, params.max_facets)
    structural = {"datasets": find_datasets(idea), "metrics": find_terms(idea, METRICS),
                  "method_families": find_terms(idea, METHOD_FAMILIES)}
    high_level = split_high_level(idea, structural["method_families"])
    keywords = distinct([*facets, *structural["method_families"], *structural["datasets"]])
    return IdeaStructure(
        idea=idea, facets=facets, structural=structural, high_level=high_level,
        queries=build_queries(idea, facets, params.max_queries), web_queries=[],
        keywords=keywords,
        sources={part: STRUCTURER for part in
                 ("facets", "structural", "high_level", "queries", "keywords")}
        | {"web_queries": f"{STRUCTURER}: none (no web search route)"},
    )


def choose_facets(idea: str, low: int, high: int) -> list[str]:
    """Multi-word keyphrases first (best RAKE score), then single words, 3-7 in all, none
    whose words another chosen facet already holds."""
    phrases = keyphrases(idea)
    ordered = [p for p in phrases if " " in p] + [p for p in phrases if " " not in p]
    chosen: list[str] = []
    seen: list[set[str]] = []
    for phrase in ordered:
        stems = {stem(word) for word in phrase.split()}
        if any(stems <= other for other in seen):
            continue
        multi = " " in phrase
        if not multi and len(chosen) >= low:
            break
        chosen.append(phrase)
        seen.append(stems)
        if len(chosen) >= high:
            break
    # A very short idea: pad with the single words of its phrases, never invent.
    words = [word for phrase in chosen for word in phrase.split()]
    for word in distinct(words):
        if len(chosen) >= low:
            break
        if word not in chosen:
            chosen.append(word)
    return chosen


def find_terms(idea: str, lexicon: Sequence[str]) -> list[str]:
    found = []
    for term in lexicon:
        flags = 0 if any(ch.isupper() for ch in term) else re.IGNORECASE
        if re.search(rf"(?<![\w-]){re.escape(term)}s?(?![\w-])", idea, flags):
            found.append(term)
    return found


def find_datasets(idea: str) -> list[str]:
    """Capitalised names (an inner capital or digit: 'ImageNet', 'CoNLL-2003') within a few
    words of 'dataset', 'corpus', 'benchmark' or 'treebank'."""
    found = []
    for match in DATASET_WORD.finditer(idea):
        window = idea[max(0, match.start() - 40): match.end() + 40]
        found += NAME.findall(window)
    return distinct(found)


def split_high_level(idea: str, method_families: list[str]) -> dict[str, list[str]]:
    marker = MECHANISM_MARKER.search(idea)
    before, after = (idea[: marker.start()], idea[marker.end():]) if marker else (idea, "")
    assumption = ASSUMPTION_MARKER.search(idea)
    result = {
        "problem_facets": keyphrases(before)[:3],
        "setting_facets": find_datasets(idea),
        "mechanism_facets": distinct([*keyphrases(after)[:3], *method_families])[:7],
        "assumption_facets": keyphrases(idea[assumption.end():])[:2] if assumption else [],
    }
    return {key: result[key] for key in HIGH_LEVEL_KEYS}


def build_queries(idea: str, facets: list[str], limit: int) -> list[str]:
    whole = " ".join(distinct(content_words(idea))[:32])
    queries = [whole] if whole else []
    queries += [facet for facet in facets if " " in facet]
    multi = [facet for facet in facets if " " in facet] or facets
    queries += [f"{a} {b}" for i, a in enumerate(multi[:4]) for b in multi[i + 1:4]]
    return distinct(q for q in queries if q.strip())[:limit]


class OfflineRecaller:
    name = "offline-none"

    def recall(self, runner: ModelRunner, idea: str, max_papers: int) -> RecallOutcome:
        return RecallOutcome("skipped", self.name, reason="no expert endpoint is configured; "
                             "the offline backends recall no titles")


# --- assessment -------------------------------------------------------------------------


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


# --- the expert -------------------------------------------------------------------------


class OfflineExpert:
    """A documented deterministic scorer standing in for the expert model."""

    name = EXPERT

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder

    def rank(self, runner: ModelRunner, structure: IdeaStructure,
             entries: Sequence[model_calls.ShortlistEntry]) -> ExpertOutcome:
        if not entries:
            return failed_outcome(EXPERT, "missing_input", "empty shortlist")
        signals = self.signals(structure, entries)
        order = sorted(range(len(entries)), key=lambda i: (-signals[i]["score"], i))
        count = min(5, len(entries))
        reply = {"candidates": [
            {"rank": rank, "paper_id": entries[i].paper.id,
             "expert_reason": describe(signals[i]),
             "evidence_source": allowed_source(entries[i].supplied)}
            for rank, i in enumerate(order[:count], start=1)]}
        return check_and_build(EXPERT, json.dumps(reply), entries)

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
    first = (f"Offline fused rank score {signal['score']:.4f}: {basis} cosine "
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


# --- the report -------------------------------------------------------------------------


class OfflineReporter:
    name = REPORTER

    def write(self, runner: ModelRunner, structure: IdeaStructure, synthesis: dict[str, Any],
              shortlist: Sequence[Candidate]) -> ReportOutcome:
        markdown, cited = render_offline_report(synthesis)
        return ReportOutcome("written", REPORTER, markdown,
                             "Offline template report: grades are offline similarity "
                             "judgements, not a model's reading.", cited)


def render_offline_report(synthesis: dict[str, Any]) -> tuple[str, list[str]]:
    meta, papers = synthesis["metadata"], synthesis["papers"]
    by_id = {paper["paper_id"]: paper for paper in papers}
    headings = report_headings()
    cited: list[str] = []

    def listing(bucket: str) -> str:
        ids = synthesis["buckets"].get(bucket, [])
        if not ids:
            return "None found among the shortlisted works."
        cited.extend(ids)
        return "\n".join(f"- **{by_id[pid]['title']}** ({by_id[pid]['year'] or 'n.d.'}, "
                         f"`{pid}`): {by_id[pid]['notes']}" for pid in ids)

    facets = "\n".join(f"- {label}: {facet}" for label, facet in meta["facets"].items())
    ranked = sorted((p for p in papers if p["final_rank"]), key=lambda p: p["final_rank"])
    overview = "\n".join(f"{p['final_rank']}. **{p['title']}** ({p['year'] or 'n.d.'}): "
                         f"{p['expert_reason']}" for p in ranked) or "No final ranking."
    cited.extend(p["paper_id"] for p in ranked)
    stats = synthesis["global_stats"]
    limits = "\n".join(f"- {note}" for note in synthesis["limitations"]["notes"])
    bodies = [
        f"{meta['idea_description']}\n\nFacets:\n{facets}",
        f"The expert's top works:\n\n{overview}",
        listing("high_overlap"),
        listing("partial_overlap"),
        listing("adjacent"),
        "An offline template cannot judge gaps; read the partial-overlap notes for the facets "
        "no work covers.",
        f"Counts: {json.dumps(stats, sort_keys=True)}\n\n{limits}",
    ]
    sections = [f"## {h}\n\n{b}" for h, b in zip(headings, bodies, strict=True)]
    text = "**TL;DR.** Offline template report from the run's saved evidence.\n\n"
    return text + "\n\n".join(sections) + "\n", distinct(cited)
