"""Benchmark landscape of a topic: the data sets, metrics and method families named in the
titles and abstracts of the topic's candidate papers, with how many papers name each and
which papers they are. A preliminary exploration (LABEL), not a systematic survey: a name
counts where a paper writes it, whether it used it, compared against it or only cites it.

Candidates: the topic's own text ranking (BM25 and embeddings fused, search/text_ranking.py),
`limit` papers.

Offline path (always available): rules over each paper's title and abstract.
- data sets: a name followed by "dataset", "data set", "benchmark", "corpus", "catalogue",
  "survey" or "data" ("the WMAP data", "SQuAD benchmark"), and names in KNOWN_DATASETS;
- metrics: the measures of METRICS, and "<word> score|error|rate|loss";
- method families: the families of METHOD_FAMILIES, and a name of one to three words before
  "method", "model", "algorithm", "approach", "expansion", "formalism", "ansatz",
  "network", "simulation" or "theory".
Names are lower-cased, plurals and leading articles folded, so "Matrix Models" and "the
matrix model" count once; see `combine` for names inside longer ones.

Model path (a planner endpoint): each abstract is read with the idea_structural_features
prompt, and its three lists replace the rules' for that paper.
"""

import re
import uuid

from pydantic import BaseModel, ConfigDict, Field

from crase.errors import InvalidRequest
from crase.graph import Graph
from crase.idea.roles.model_calls import extract_structural_features
from crase.models.chat import ModelReply, ModelRunner
from crase.research.literature_runs import TEXT_RANKING, record_report
from crase.run_lifecycle import SILENT, RunLifecycle, RunObserver, to_json
from crase.scoring.tex import plain_text
from crase.search.text_ranking import Encoder, has_searchable_word, query_hits
from crase.settings import ModelEndpoint, ModelSettings
from crase.text_limits import LinearPattern, compile_linear

STAGES = ("candidates", "extract", "count", "record")
LABEL = ("Preliminary exploration: names found in the candidates' titles and abstracts, "
         "counted per paper. Not a verified systematic survey: a paper that names a data "
         "set or metric may only mention it, and one that uses it may not name it.")
KINDS = ("datasets", "metrics", "method_families")
KNOWN_DATASETS = ("imagenet", "cifar-10", "cifar-100", "mnist", "coco", "squad", "glue",
                  "superglue", "wmt", "penn treebank", "wmap", "planck", "sdss", "cmb",
                  "lhc", "tevatron", "lep", "hera", "kitti", "pascal voc", "librispeech")
METRICS = ("accuracy", "precision", "recall", "f1", "bleu", "rouge", "perplexity", "auc",
           "mean squared error", "cross section", "cross-section", "decay rate",
           "mean average precision", "top-1 accuracy", "top-5 accuracy", "chi-squared",
           "likelihood", "entropy", "free energy", "anomalous dimension", "beta function",
           "critical exponent", "central charge", "spectrum", "partition function")
METHOD_FAMILIES = ("perturbation theory", "renormalization group", "monte carlo",
                   "lattice", "string field theory", "conformal field theory",
                   "matrix model", "sigma model", "neural network", "transformer",
                   "convolutional neural network", "recurrent neural network",
                   "gradient descent", "bootstrap", "ads/cft", "holography",
                   "effective field theory", "supersymmetry", "bethe ansatz",
                   "path integral", "instanton", "localization", "duality")
DATASET_WORDS = r"(?:datasets?|data sets?|benchmarks?|corpus|corpora|catalogues?|surveys?|data)"
METHOD_WORDS = (r"(?:methods?|models?|algorithms?|approach(?:es)?|expansions?|formalisms?|"
                r"ansatz|networks?|simulations?|theory|theories)")
NAME_WORD = r"[A-Za-z][\w/-]*"
# Stored titles and abstracts are read with RE2 (crase.text_limits.compile_linear): with
# Python's engine a run of `-A` or `-z` made each of these quadratic (0.3 s at 4,000
# characters, seconds at 20,000, in one call).
DATASET_NAME = compile_linear(
    rf"\b((?:[A-Z][\w-]*\s){{0,2}}[A-Z][\w-]*)\s+{DATASET_WORDS}\b")
# Matched at every start (word_phrases), so that "the error rate" yields "error rate"
# as well as "the error".
METRIC_PHRASE = compile_linear(
    rf"\b({NAME_WORD}\s+(?:scores?|errors?|rates?|loss(?:es)?))\b", re.IGNORECASE)
METHOD_PHRASE = compile_linear(rf"\b((?:{NAME_WORD}\s){{0,2}}{NAME_WORD})\s+{METHOD_WORDS}\b")
# Words that make a phrase a description rather than a name ("this model", "new method").
STOP = frozenset({"a", "an", "the", "this", "that", "these", "those", "our", "its", "their",
                  "new", "simple", "general", "standard", "such", "same", "other", "which",
                  "we", "in", "of", "for", "and", "or", "to", "with", "on", "by", "is", "are",
                  "be", "as", "at", "from", "it", "all", "two", "one", "some", "any", "each",
                  "both", "first", "second", "full", "given", "usual", "present",
                  "experimental", "observational", "low", "high", "large", "small", "over",
                  "into", "under", "between", "via", "using", "through", "than", "not", "has",
                  "have", "can", "also", "was", "were", "been", "more", "most", "no", "so",
                  "then", "there", "here", "where", "when", "while", "very", "only", "like",
                  "about", "within", "without", "after", "before", "up", "out", "my"})
# Head words that alone name no family, set or measure ("the model", "these data").
GENERIC = frozenset({"model", "method", "algorithm", "approach", "expansion", "formalism",
                     "ansatz", "network", "simulation", "theory", "dataset", "data",
                     "data set", "benchmark", "corpus", "catalogue", "survey", "score",
                     "error", "rate", "loss"})


class LandscapeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    topic: str = Field(min_length=1, max_length=2000, description="Words of the topic")
    limit: int = Field(50, ge=1, le=500, description="Candidate papers read")
    min_papers: int = Field(1, ge=1, le=500, description="Least papers a name needs to be listed")


class LandscapeEntry(BaseModel):
    name: str
    papers: int = Field(description="How many candidates name it")
    paper_ids: list[str]


class PaperNames(BaseModel):
    paper_id: str
    title: str
    year: int | None
    source: str = Field(description="'rules' or 'model'")
    datasets: list[str]
    metrics: list[str]
    method_families: list[str]


class Landscape(BaseModel):
    run_id: str
    topic: str
    label: str
    datasets: list[LandscapeEntry]
    metrics: list[LandscapeEntry]
    method_families: list[LandscapeEntry]
    papers: list[PaperNames]
    extraction: str = Field(description="What read the abstracts: rules, or a model")
    counts: dict[str, int]
    backends: dict[str, str]
    timings: dict[str, float]


def map_landscape(graph: Graph, encoder: Encoder | None, request: LandscapeRequest,
                  models: ModelSettings | None = None, run_id: str | None = None,
                  observer: RunObserver = SILENT) -> Landscape:
    """The landscape of a topic, recorded as a Run of kind 'landscape'."""
    run_id = run_id or uuid.uuid4().hex[:12]
    if not has_searchable_word(request.topic):
        raise InvalidRequest("the topic has no word to search for; describe it in words")
    endpoint = models.planner if models is not None and models.planner.configured else None
    backends = {"candidates": TEXT_RANKING if encoder else "bm25",
                "extraction": f"model:{endpoint.model}" if endpoint else "rules-v1"}
    with RunLifecycle.open(graph, run_id, "landscape", request.topic,
                           request.model_dump(mode="json"), backends, STAGES,
                           observer) as run:
        with run.stage("candidates"):
            hits = query_hits(graph, encoder, request.topic, request.limit, [])
            rows = graph.read("read_papers", ids=[hit.id for hit in hits])
        with run.stage("extract"):
            papers = [names_by_rules(row) for row in rows]
            if endpoint is not None and models is not None:
                runner = ModelRunner.from_settings(models)
                papers = [names_by_model(runner, endpoint, row, rules)
                          for row, rules in zip(rows, papers, strict=True)]
                run.usage = runner.ledger.to_dict
        with run.stage("count"):
            tables = {kind: count_names(papers, kind, request.min_papers) for kind in KINDS}
        result = Landscape(
            run_id=run_id, topic=request.topic, label=LABEL, papers=papers,
            extraction=backends["extraction"] if endpoint else
            "rules: no planner endpoint is configured, so names come from the rules in "
            "research/landscape.py, not from a model",
            counts={"candidates": len(papers), **{kind: len(tables[kind]) for kind in KINDS}},
            backends=backends, timings=run.timings, **tables)
        with run.stage("record"):
            relevance = {hit.id: hit.score for hit in hits}
            record_report(run, result, [
                {"paper_id": p.paper_id, "rank": rank, "score": relevance[p.paper_id],
                 "evidence": to_json(p.model_dump())}
                for rank, p in enumerate(papers, start=1)])
        run.counts = result.counts
    return result


def names_by_rules(row: dict[str, object]) -> PaperNames:
    """The names the rules find in one paper's title and abstract."""
    text = plain_text(f"{row.get('title') or ''}. {row.get('abstract') or ''}")
    year = row.get("year")
    return PaperNames(paper_id=str(row["id"]), title=str(row.get("title") or ""),
                      year=year if isinstance(year, int) else None, source="rules",
                      datasets=find_datasets(text), metrics=find_metrics(text),
                      method_families=find_method_families(text))


def names_by_model(runner: ModelRunner, endpoint: ModelEndpoint, row: dict[str, object],
                   rules: PaperNames) -> PaperNames:
    """The model's three lists for one paper; the rules' names stay when the call fails."""
    text = f"{row.get('title') or ''}. {row.get('abstract') or ''}"
    outcome = extract_structural_features(runner, endpoint, text)
    if not isinstance(outcome, ModelReply):
        return rules
    reply = outcome.value
    return rules.model_copy(update={
        "source": "model", "datasets": fold_all(reply.datasets),
        "metrics": fold_all(reply.metrics), "method_families": fold_all(reply.method_families)})


def find_datasets(text: str) -> list[str]:
    return combine([name for name in KNOWN_DATASETS if contains(text, name)],
                   word_phrases(DATASET_NAME, text, 1))


def find_metrics(text: str) -> list[str]:
    return combine([name for name in METRICS if contains(text, name)],
                   word_phrases(METRIC_PHRASE, text, 1, overlapping=True))


def find_method_families(text: str) -> list[str]:
    return combine([name for name in METHOD_FAMILIES if contains(text, name)],
                   word_phrases(METHOD_PHRASE, text, 0))


def word_phrases(pattern: LinearPattern, text: str, group: int,
                 overlapping: bool = False) -> list[str]:
    """The `group` of each match of a pattern that starts and ends with `\\b`, in text
    order; with `overlapping`, of the match at every start where one begins (what a
    lookahead gives in Python's engine; RE2 has none). RE2's `\\b` is ASCII, so a match
    next to a non-ASCII letter (`ve loss` in `naïve loss`) is passed over here."""
    # On the UTF-8 bytes: a search from an offset into a str encodes the whole text again,
    # which made the loop quadratic. A match starts at an ASCII letter, never inside a
    # character's bytes.
    encoded = text.encode("utf-8")
    found = []
    start = 0
    while (match := pattern.search(encoded, start)) is not None:
        if next_to_a_letter(encoded, match.start(), match.end()):
            start = match.start() + 1
            continue
        found.append(match.group(group).decode("utf-8"))
        start = match.start() + 1 if overlapping else max(match.end(), match.start() + 1)
    return found


def next_to_a_letter(encoded: bytes, start: int, end: int) -> bool:
    """Whether the character before byte `start` or the one at byte `end` is a non-ASCII
    letter or digit (where Python's `\\b` would not hold and RE2's does)."""
    before = encoded[max(0, start - 4):start].decode("utf-8", "ignore")[-1:]
    after = encoded[end:end + 4].decode("utf-8", "ignore")[:1]
    return any(not char.isascii() and char.isalnum() for char in (before, after))


def combine(listed: list[str], phrases: list[str]) -> list[str]:
    """The listed names a paper writes, then the names its phrases give. A listed name
    always counts (so "conformal field theory" is counted also where the paper writes
    "two-dimensional conformal field theory") unless a longer listed name holds it ("top-1
    accuracy" holds "accuracy"); a phrase counts only as its longest form."""
    named = fold_all(listed)
    return named + [name for name in fold_all(phrases + named) if name not in named]


def contains(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}s?(?![\w-])", text, re.IGNORECASE) is not None


def fold_all(names: list[str]) -> list[str]:
    """Folded names, each once, in first-seen order; descriptions ("this model") dropped,
    and a name inside a longer one of the same paper ("neural network" beside
    "convolutional neural network") counted only as the longer one."""
    folded = list(dict.fromkeys(name for name in (fold(n) for n in names) if name))
    return [name for name in folded
            if not any(other != name and f" {name} " in f" {other} " for other in folded)]


def fold(name: str) -> str:
    """Lower case, leading articles and descriptive words off, a plural last word made
    singular; "" for a description rather than a name (a function word or a lone letter
    inside it, or a bare head word such as "model")."""
    words = name.lower().split()
    while words and words[0] in STOP:
        words = words[1:]
    if not words or any(word in STOP or len(word) < 2 for word in words):
        return ""
    last = words[-1]
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3:
        last = last[:-1]
    folded = " ".join([*words[:-1], last])
    return "" if folded in GENERIC else folded


def count_names(papers: list[PaperNames], kind: str, min_papers: int) -> list[LandscapeEntry]:
    """Each name of one kind with the papers that name it, most papers first."""
    found: dict[str, list[str]] = {}
    for paper in papers:
        for name in getattr(paper, kind):
            found.setdefault(name, []).append(paper.paper_id)
    entries = [LandscapeEntry(name=name, papers=len(ids), paper_ids=ids)
               for name, ids in found.items() if len(ids) >= min_papers]
    return sorted(entries, key=lambda e: (-e.papers, e.name))
