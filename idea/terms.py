"""Words and phrases of an idea or a paper, deterministic: tokens, light stems, stopwords,
RAKE-style keyphrases. Normalised titles and their overlap live in `crase.paper_identity`
(paper identity is shared with ingest and research); the names stay importable from here.

Used by the offline structuring (facets are keyphrases), the local selection score (BM25
over stems), the offline assessor (facet-term coverage) and the PDF window selector (idea
terms). The stemmer only folds the common inflections (plural, -ing, -ed); it is a
matching aid, not linguistics.
"""

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

# Re-exported under their old names: discovery imports them from here.

WORD = re.compile(r"[a-z0-9][a-z0-9\-]*[a-z0-9]|[a-z0-9]")
PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"'/\\]|\s-\s|\n")

# Function words plus the words every research text uses; neither tells papers apart.
STOPWORDS = frozenset("""
a about above across after again against all almost also although always am among an and
another any are around as at be because been before being below between both but by can
cannot could did do does doing done down during each either enough etc even ever every few
for from further had has have having he her here hers herself him himself his how however i
if in into is it its itself just least less like made make makes making many may me might
more most much must my myself near need needs neither no nor not now of off often on once
one only onto or other others otherwise our ours ourselves out over own per perhaps rather
same several shall she should since so some such than that the their theirs them themselves
then there therefore these they this those though through thus to together too toward
towards under unless until up upon us use used uses using very via was we well were what
whatever when where whether which while who whom whose why will with within without would
yet you your yours yourself yourselves
approach approaches based could describe described different does effective efficient
existing first given good high introduce introduced large low new novel paper papers
present presented propose proposed provide provides recent result results second show
shown shows significant significantly simple studies study task tasks technique
techniques three two various way ways well-known work works i.e e.g want wonder whether
idea ideas maybe try trying able help helps allow allows instead rather something
et al
""".split())


def fold(text: str) -> str:
    """Lower case, accents and typographic dashes removed."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return text.replace("\u2013", "-").replace("\u2014", "-").casefold()


def tokens(text: str) -> list[str]:
    return WORD.findall(fold(text))


def stem(word: str) -> str:
    """Fold plural, -ing and -ed endings so 'networks'/'network', 'learning'/'learned'
    meet; short words are left alone."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement, min_len in (
        ("ies", "y", 5), ("sses", "ss", 5), ("ing", "", 6), ("ed", "", 5), ("es", "e", 5),
    ):
        if word.endswith(suffix) and len(word) >= min_len:
            return word[: -len(suffix)] + replacement
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def is_stopword(word: str) -> bool:
    """A stopword in any inflection ('introduces', 'results'), or a bare number."""
    return word in STOPWORDS or stem(word) in STOPWORDS or word.isdigit()


def content_words(text: str) -> list[str]:
    """Tokens that are not stopwords (nor bare numbers), in order, repeats kept."""
    return [word for word in tokens(text) if not is_stopword(word)]


def content_stems(text: str) -> list[str]:
    return [stem(word) for word in content_words(text)]


def distinct(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def keyphrases(text: str, max_words: int = 4) -> list[str]:
    """RAKE-style keyphrases, best first: runs of content words between stopwords and
    punctuation, scored by the sum of degree/frequency of their words. Runs longer than
    `max_words` are cut into pieces. Ties keep the order of first appearance."""
    phrases: list[list[str]] = []
    for chunk in PHRASE_BREAK.split(fold(text)):
        run: list[str] = []
        for word in WORD.findall(chunk):
            if is_stopword(word):
                phrases.extend(_pieces(run, max_words))
                run = []
            else:
                run.append(word)
        phrases.extend(_pieces(run, max_words))
    frequency: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for phrase in phrases:
        for word in phrase:
            frequency[word] += 1
            degree[word] += len(phrase)
    scored: dict[str, tuple[float, int]] = {}
    for order, phrase in enumerate(phrases):
        key = " ".join(phrase)
        if key not in scored:
            score = sum(degree[w] / frequency[w] for w in phrase)
            scored[key] = (score, order)
    return [key for key, _ in sorted(scored.items(), key=lambda item: (-item[1][0], item[1][1]))]


def _pieces(run: list[str], max_words: int) -> list[list[str]]:
    return [run[start : start + max_words] for start in range(0, len(run), max_words) if run]
