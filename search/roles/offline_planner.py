"""The offline planner: keyword sub-queries from the query's own key phrases.

Method (deterministic, no model):

1. TeX is reduced to plain words (`$\\sigma$-model` -> `sigma-model`), the text lower-cased
   and cut into tokens of letters and digits; hyphenated words split into their parts
   (Lucene's standard analyzer indexes `D-brane` as `d`, `brane` too).
2. Candidate key phrases are the runs of tokens between stopwords and punctuation (general
   English stopwords plus the filler of academic prose: "paper", "study", "show",
   "results", ...), cut into n-grams of at most four words. One-letter tokens are dropped.
3. A word weighs its frequency in the query, plus 0.5 each when it looks technical (eight or
   more letters, or contains a digit, or came from a hyphenated or TeX term) and when it occurs
   in the first sentence (for a title-plus-abstract query, the title). A phrase scores the
   sum of its words' weights (so longer technical phrases rank first, as in RAKE); phrases
   whose words all appear in a better phrase are dropped.
4. Sub-query 1 is every key phrase in rank order (up to ten words): the whole query as
   keywords. Each following sub-query is the top phrase (the query's main technical term)
   with one other phrase, so every sub-query keeps the core term and adds one facet; then
   single phrases and other pairs, if more are needed. Repeats (same word set) are skipped,
   so a query too short to vary yields fewer than `count` sub-queries rather than the same
   search twice.

Each sub-query holds only lower-case letters, digits and single spaces: a valid Lucene query
as it stands (no operator words, no special characters; Lucene ORs the terms and BM25
rewards papers matching more of them), and unchanged by Lucene escaping.
"""

import re
from dataclasses import dataclass

from crase.scoring.tex import plain_text
from crase.usage import Usage

STOPWORDS = frozenset("""
a about above across after again against all almost along already also although always am
among an and another any are around as at be because been before being below between both
but by can cannot could did do does doing done down due during each either else even ever
every few for from further had has have having he her here hers him his how however i if
in into is it its itself just least less like made make makes many may might more most much
must my near nearly neither no nor not now of off often on once one only onto or other our
ours out over own per rather same several she should since so some such than that the their
them then there these they this those through thus to too toward towards under until up
upon us use used uses using very via was we well were what when where whether which while
who whom whose why will with within without would yet you your
paper papers letter note article work study studies studied show shows shown showed
present presents presented propose proposes proposed result results find finds found
obtain obtains obtained consider considers considered discuss discusses discussed
investigate investigates investigated describe describes described new novel based
approach method methods analysis analyze analyse give gives given provide provides
provided derive derives derived compute computes computed calculate calculated case
cases way ways problem problems first second also various general particular certain
possible different recent recently well known able simple demonstrate demonstrated
argue argued point points number order terms term form within find here
""".split())
TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
BOUNDARY = re.compile(r"[.,;:!?()\[\]{}\"]+")
MAX_PHRASE_WORDS = 4
FIRST_QUERY_WORDS = 10
FACET_QUERY_WORDS = 8


@dataclass(frozen=True)
class KeyPhrase:
    words: tuple[str, ...]
    score: float
    position: int  # first occurrence, for stable ordering


def tokenize_segment(segment: str, technical: set[str]) -> list[str]:
    """Words of a punctuation-free segment; hyphenated words split, their parts marked
    technical."""
    words: list[str] = []
    for token in TOKEN.findall(segment):
        parts = [p for p in re.split(r"[-']", token) if p]
        if len(parts) > 1:
            technical.update(parts)
        words.extend(parts)
    return words


def phrase_runs(text: str, technical: set[str]) -> list[list[str]]:
    """Runs of content words between punctuation and stopwords."""
    runs: list[list[str]] = []
    for segment in BOUNDARY.split(text.lower()):
        run: list[str] = []
        for word in tokenize_segment(segment, technical):
            if word in STOPWORDS:
                if run:
                    runs.append(run)
                run = []
            elif len(word) > 1:
                run.append(word)
        if run:
            runs.append(run)
    return runs


def word_weights(runs: list[list[str]], technical: set[str], title: set[str]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for run in runs:
        for word in run:
            weights[word] = weights.get(word, 0.0) + 1.0
    for word in weights:
        if len(word) >= 8 or any(ch.isdigit() for ch in word) or word in technical:
            weights[word] += 0.5
        if word in title:
            weights[word] += 0.5
    return weights


def rank_phrases(runs: list[list[str]], weights: dict[str, float]) -> list[KeyPhrase]:
    phrases: dict[tuple[str, ...], KeyPhrase] = {}
    position = 0
    for run in runs:
        for start in range(0, len(run), MAX_PHRASE_WORDS):
            words = tuple(run[start : start + MAX_PHRASE_WORDS])
            if words not in phrases:
                score = sum(weights[w] for w in words)
                phrases[words] = KeyPhrase(words, score, position)
            position += 1
    ranked = sorted(phrases.values(), key=lambda p: (-p.score, p.position))
    kept: list[KeyPhrase] = []
    for phrase in ranked:
        if not any(set(phrase.words) <= set(better.words) for better in kept):
            kept.append(phrase)
    return kept


def key_phrases(query: str) -> list[KeyPhrase]:
    """Ranked key phrases of a query."""
    text = plain_text(query)
    technical = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", text) if w[1:].lower() != w[1:]}
    first_sentence = re.split(r"(?<=[.?!])\s", text, maxsplit=1)[0]
    title = set(TOKEN.findall(first_sentence.lower())) | {
        part for word in TOKEN.findall(first_sentence.lower()) for part in re.split(r"[-']", word)
    }
    runs = phrase_runs(text, technical)
    weights = word_weights(runs, technical, title)
    return rank_phrases(runs, weights)


def join_words(words: list[str], limit: int) -> str:
    unique: list[str] = []
    for word in words:
        if word not in unique:
            unique.append(word)
    return " ".join(unique[:limit])


def build_sub_queries(phrases: list[KeyPhrase], count: int) -> list[str]:
    """Whole query first, then the top phrase with each other phrase, then single phrases,
    then other pairs; repeats (same word set) skipped."""
    top, rest = phrases[0], phrases[1:]
    candidates = [join_words([w for p in phrases for w in p.words], FIRST_QUERY_WORDS)]
    candidates += [join_words([*top.words, *p.words], FACET_QUERY_WORDS) for p in rest]
    candidates += [join_words(list(p.words), FACET_QUERY_WORDS) for p in phrases]
    candidates += [
        join_words([*first.words, *second.words], FACET_QUERY_WORDS)
        for i, first in enumerate(rest) for second in rest[i + 1 :]
    ]
    plan: list[str] = []
    seen: set[frozenset[str]] = set()
    for candidate in candidates:
        key = frozenset(candidate.split())
        if candidate and key not in seen:
            seen.add(key)
            plan.append(candidate)
        if len(plan) == count:
            break
    return plan


def fallback_query(query: str) -> list[str]:
    """A query of stopwords only still searches its own words."""
    words = [w for w in tokenize_segment(plain_text(query).lower(), set()) if len(w) > 1]
    text = join_words(words, FIRST_QUERY_WORDS)
    return [text] if text else []


class OfflinePlanner:
    """Planner without a model: keyword sub-queries from the query's key phrases."""

    name = "offline-keyphrase-v1"

    def __init__(self) -> None:
        self.usage = Usage()

    def plan(self, query: str, count: int) -> list[str]:
        """Up to `count` distinct Lucene-safe keyword sub-queries (see the module doc)."""
        self.usage.calls += 1
        self.usage.made += 1
        self.usage.models.add(self.name)
        if count < 1:
            return []
        phrases = key_phrases(query)
        if not phrases:
            return fallback_query(query)[:count]
        return build_sub_queries(phrases, count)
