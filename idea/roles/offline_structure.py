"""Offline structuring and recall of the idea workflow, used where no model endpoint is
configured; deterministic, with names starting "offline-".

- Structuring (`offline-keyphrases`): facets are the idea's RAKE keyphrases (3-7);
  structural features come from small lexicons of metrics and method families and from
  capitalised names next to "dataset", "corpus" or "benchmark" (a short idea's facets are
  padded with the single words of its phrases); high-level facets split the
  idea at its first mechanism marker ("using", "by", "with", "via", "based on"): problem
  phrases before it, mechanism phrases after it; queries are the idea's content words, each
  multi-word facet, and pairs of the top facets.
- Recall (`offline-none`): recalls nothing; the route is skipped with that reason.
"""

import re
from collections.abc import Sequence

from crase.idea.discovery import RecallOutcome
from crase.idea.structuring import HIGH_LEVEL_KEYS, IdeaStructure
from crase.idea.terms import content_words, distinct, keyphrases, stem
from crase.models.chat import ModelRunner
from crase.settings import IdeaSettings

STRUCTURER = "offline-keyphrases"

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
