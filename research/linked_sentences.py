"""Distantly labelled claim pairs mined from a corpus's abstracts, the way SciNLI was built.

Two consecutive sentences where the second opens with a linking phrase say how they relate:
"therefore", "thus", "hence" (reasoning), "in other words", "specifically", "that is"
(entailment), "however", "in contrast", "on the other hand" (contrasting). The phrase is
removed and the next word lower-cased, as SciNLI did (its second sentences start in lower
case in every class), so a model cannot learn the phrase itself. Neutral pairs are two
sentences of one abstract that are not adjacent, the second lower-cased alike.

Sentences are split and cleaned of TeX exactly as the offline claim extractor makes claims
(search/roles/offline_claims.py), so the model is trained on text shaped like the claims it
scores. Deterministic: the same abstracts and seed give the same pairs.
"""

import json
import random
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from crase.errors import CorpusError
from crase.ingest.corpus import HugeLine, read_lines
from crase.models.claim_pair.training import LabelledPair
from crase.search.roles.offline_claims import claim_text, split_sentences
from crase.user_files import open_user_file

MAX_CORPUS_BYTES = 64_000_000_000  # a papers.jsonl to mine: any real corpus, not /dev/zero
MAX_PAPER_LINE_BYTES = 1_000_000  # one paper's line (the ingest's own max_line_bytes)

LINKING_PHRASES: dict[str, tuple[str, ...]] = {
    "reasoning": ("therefore", "thus", "hence", "consequently", "as a result",
                  "as a consequence", "accordingly", "for this reason"),
    "entailment": ("in other words", "specifically", "that is", "namely", "in particular",
                   "more precisely", "more specifically", "to be specific"),
    "contrasting": ("however", "in contrast", "on the other hand", "on the contrary",
                    "by contrast", "nevertheless", "nonetheless", "conversely"),
}
# Longest first, so "that is" is not read as a shorter phrase's start.
OPENERS = sorted(((phrase, label) for label, phrases in LINKING_PHRASES.items()
                  for phrase in phrases), key=lambda item: -len(item[0]))
PHRASE_END = re.compile(r"\s*,?\s*")
MIN_WORDS = 4  # shorter "sentences" are headings, formulas or splitting accidents
MIN_REST_CHARS = 20  # what is left after the phrase must be a statement of its own


def abstract_sentences(abstract: str) -> list[str]:
    sentences = (claim_text(text) for _, text in split_sentences(abstract))
    return [s for s in sentences if len(s.split()) >= MIN_WORDS]


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def strip_linking_phrase(sentence: str) -> tuple[str, str] | None:
    """(label, the sentence without its opening phrase) or None where none opens it."""
    lowered = sentence.lower()
    for phrase, label in OPENERS:
        end = len(phrase)
        if lowered.startswith(phrase) and not lowered[end:end + 1].isalnum():
            match = PHRASE_END.match(sentence, end)
            rest = sentence[match.end() if match else end:]
            if len(rest) >= MIN_REST_CHARS:
                return label, lower_first(rest)
    return None


def linked_pairs(sentences: list[str], source: str) -> Iterator[LabelledPair]:
    for first, second in zip(sentences, sentences[1:], strict=False):
        found = strip_linking_phrase(second)
        if found is not None:
            yield LabelledPair(first, found[1], found[0], source)


def neutral_pair(sentences: list[str], source: str, rng: random.Random) -> LabelledPair | None:
    """Two sentences of one abstract with at least one sentence between them."""
    if len(sentences) < 3:
        return None
    first = rng.randrange(len(sentences))
    far = [i for i in range(len(sentences)) if abs(i - first) >= 2]
    second = sentences[rng.choice(far)] if far else None
    if second is None:
        return None
    return LabelledPair(sentences[first], lower_first(second), "neutral", source)


def read_abstracts(papers_file: Path) -> Iterator[str]:
    """The non-empty abstracts of a corpus's papers.jsonl, in file order."""
    try:
        with open_user_file(papers_file, "the corpus", MAX_CORPUS_BYTES) as handle:
            for number, _, line in read_lines(handle, MAX_PAPER_LINE_BYTES):
                try:
                    if isinstance(line, HugeLine):
                        raise ValueError(f"a line of {line.size:,} bytes, more than the "
                                         f"{line.limit:,} allowed")
                    abstract = json.loads(line).get("abstract") or ""
                except (ValueError, AttributeError, RecursionError) as error:
                    raise CorpusError(f"{papers_file}, line {number}: not a paper object "
                                      f"({error}); give a corpus's papers.jsonl") from error
                if isinstance(abstract, str) and abstract.strip():
                    yield abstract
    except FileNotFoundError as error:
        raise CorpusError(f"{papers_file} does not exist; give a corpus's papers.jsonl "
                          "(e.g. ../shared/data/hepth/papers.jsonl)") from error


def mine_pairs(abstracts: Iterable[str], source: str, neutral_share: float,
               seed: int) -> list[LabelledPair]:
    """Linked pairs of every abstract, and a neutral pair from an abstract with probability
    `neutral_share` (drawn with `seed`)."""
    rng = random.Random(seed)
    pairs: list[LabelledPair] = []
    for abstract in abstracts:
        sentences = abstract_sentences(abstract)
        pairs.extend(linked_pairs(sentences, source))
        if rng.random() < neutral_share:
            neutral = neutral_pair(sentences, source, rng)
            if neutral is not None:
                pairs.append(neutral)
    return pairs
