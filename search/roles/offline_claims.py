"""The offline claim extractor: contribution sentences of the paper's own text, typed by cues.

No model is involved, so a claim here is a whole sentence rather than an atomic rewrite:

1. Title, abstract and introduction are split into sentences, and a sentence into its
   semicolon-separated clauses when each clause has five words or more. Math spans (`$...$`) are
   masked first, so `$1.5$` or `$\\dots.$` never ends a sentence; a period after a known
   abbreviation (e.g., et al., Eq., Ref., Phys.) or a single initial (`J. Maldacena`) does
   not either, nor one followed by a lower-case word.
2. Each sentence is scored: contribution cues ("we show", "we propose", "in this paper", ...)
   weigh most, first and last abstract sentences get a small bonus, fragments and very long
   run-ons a penalty, introduction sentences rank below abstract ones. The title is a
   candidate with a fixed middling score: it is the paper's own summary.
3. The four best are kept, a fifth only if it carries a contribution cue (the 4-5 claims of
   the method); fewer when the text has fewer sentences, one (the title) when the abstract is
   empty. Claims come back in text order.
4. Each claim keeps `source_phrase`, the sentence exactly as it stands in the text
   (a substring of title, abstract or introduction), and `text`, the same sentence with TeX
   reduced to plain words. Its type comes from cue words (see `classify_claim`).

Deterministic: the same paper always yields the same claims.

The text is a draft a user sent or an abstract stored from a dataset, so every pattern runs on
RE2 (crase.text_limits: linear time), the word before a period is looked for in a bounded
window, and the loop over sentence ends checks a CPU deadline.
"""

import re
from dataclasses import dataclass

from crase.scoring.claims import Claim, ClaimType, PaperText
from crase.scoring.tex import mask_math, plain_text
from crase.text_limits import CpuDeadline, LinearPattern, compile_linear
from crase.usage import Usage

ABBREVIATIONS = frozenset(
    "e.g i.e et al cf vs viz etc resp approx ca fig figs eq eqs eqn eqns ref refs sec secs "
    "ch chap app no nos vol pp phys rev lett nucl mod math proc int j dr prof mr ms st "
    "jr sr ed eds dept univ inc ltd co corp est var lit op cit ibid".split()
)
# Words that open sentences but are never surnames: after "B." they mean the "B" was a
# symbol ending a sentence, not an initial.
SENTENCE_OPENERS = frozenset(
    "we the in this it a an our these those there here for as using finally moreover "
    "however thus hence furthermore also such both all its on by from at with to when if "
    "while although since then next first second third further besides this that".split()
)
# Sentence end: punctuation, optional closing quote or bracket, whitespace.
SENTENCE_END = compile_linear(r"[.!?]+[\"')\]$]*\s+")
WORD_BEFORE = compile_linear(r"([A-Za-z][A-Za-z.]*)\.*$")
# How far before a period its word is looked for: an abbreviation or an initial is far
# shorter, and a longer word is neither however it ends (bounds the work per sentence end).
WORD_BEFORE_WINDOW = 40
CLAUSE_BREAK = compile_linear(r";\s+")
LETTERS = compile_linear(r"[A-Za-z]+")
# The CPU time one text's sentences may take: a two-megabyte text splits in well under it.
SPLIT_CPU_S = 5.0
STRONG_CUE = compile_linear(
    r"\b(?:we|i)\s+(?:also\s+|then\s+|further\s+|here\s+|explicitly\s+|first\s+|now\s+)?"
    r"(?:show|prove|demonstrate|find|propose|present|introduce|derive|compute|calculate|"
    r"obtain|construct|develop|establish|argue|conjecture|predict|determine|identify|report|"
    r"provide|give|explain|extend|generali[sz]e|solve|formulate|discover|reproduce|"
    r"classify|evaluate|measure|achieve|point out|suggest|exhibit|verify|confirm|apply)\b",
    re.IGNORECASE,
)
WEAK_CUE = compile_linear(
    r"\b(?:we|i)\s+(?:also\s+|then\s+|further\s+|here\s+|briefly\s+|first\s+)?"
    r"(?:study|investigate|consider|discuss|describe|review|analy[sz]e|examine|explore|"
    r"use|employ|focus|address|treat|comment|summari[sz]e|outline)\b"
    r"|\bin\s+this\s+(?:paper|letter|note|work|article|talk|thesis|contribution|review)\b"
    r"|\b(?:it|this)\s+is\s+(?:shown|proven|proved|demonstrated|argued|found)\b"
    r"|\b(?:are|is)\s+(?:shown|proved|found)\s+to\b|\bour\s+(?:results?|analysis|method)\b",
    re.IGNORECASE,
)
FIRST_PERSON = compile_linear(r"\b(?:we|our|us|i)\b", re.IGNORECASE)

TYPE_CUES: dict[ClaimType, LinearPattern] = {
    "THEORETICAL": compile_linear(
        r"\b(?:prove[ds]?|proof|theorem|lemma|derive[ds]?|derivation|analytic\w*|exact(?:ly)?|"
        r"equations?|symmetr\w+|dualit\w+|conjecture\w*|formula\w*|invarian\w+|algebra\w*|"
        r"argue[ds]?|holds?|equivalen\w+|lagrangian|hamiltonian|solutions?|closed[- ]form|"
        r"bound|theor\w+|compute[ds]?|calculat\w+)\b", re.IGNORECASE),
    "METHODOLOGICAL": compile_linear(
        r"\b(?:propose[ds]?|introduce[ds]?|develop\w*|construct\w*|method\w*|approach\w*|"
        r"techniques?|algorithms?|framework|formalism|procedure|scheme|prescription|using|"
        r"based on|by means of|apply|applied|implement\w*|design\w*|architecture|pipeline|"
        r"tool\w*|model(?:s|ing|ling)?|benchmark)\b", re.IGNORECASE),
    "EMPIRICAL": compile_linear(
        r"\b(?:observ\w+|measure\w*|data(?:set)?s?|experiment\w*|numerical\w*|simulat\w+|"
        r"lattice|accuracy|outperform\w*|empirical\w*|percent|agreement|agrees?|fit(?:s|ted)?|"
        r"estimate[ds]?|evaluat\w+|statistic\w*|sample[ds]?|per cent)\b|\d+(?:\.\d+)?\s?%",
        re.IGNORECASE),
    "CONTEXTUAL": compile_linear(
        r"\b(?:recent(?:ly)?|well[- ]known|has been|have been|is known|widely|review\w*|"
        r"overview|motivat\w+|long[- ]standing|traditional\w*|much attention|progress|"
        r"survey\w*|challeng\w+|open (?:problem|question)s?|important|interest)\b",
        re.IGNORECASE),
}
TYPE_ORDER: tuple[ClaimType, ...] = ("THEORETICAL", "METHODOLOGICAL", "EMPIRICAL", "CONTEXTUAL")
LEADING_ENUMERATOR = compile_linear(r"^(?:\(?\d+(?:\.\d+)*[.)]|\([a-z]\))\s+")

MAX_CLAIMS = 5
BASE_CLAIMS = 4
TITLE_SCORE = 2.0
STRONG_SCORE = 3.0
WEAK_SCORE = 2.0


@dataclass(frozen=True)
class Sentence:
    """A sentence of one field of the paper, with where it sits and how claim-like it is."""

    field: str  # "title", "abstract" or "intro"
    start: int
    text: str  # verbatim
    score: float


def split_sentences(text: str, deadline: CpuDeadline | None = None) -> list[tuple[int, str]]:
    """(offset, verbatim sentence) pairs; offsets index `text`. ParseDeadlineExceeded past
    `deadline` (by default SPLIT_CPU_S for this text)."""
    deadline = deadline or CpuDeadline(SPLIT_CPU_S, "the sentences of a text")
    masked = mask_math(text)
    sentences: list[tuple[int, str]] = []
    start = 0
    for match in SENTENCE_END.finditer(masked):
        deadline.check()
        end = match.end()
        if end >= len(masked) or not ends_sentence(masked, match.start(), end):
            continue
        add_sentence(text, start, match.start() + len(match.group(0).rstrip()), sentences)
        start = end
    add_sentence(text, start, len(text), sentences)
    return sentences


def split_clauses(offset: int, sentence: str) -> list[tuple[int, str]]:
    """A sentence cut at semicolons (outside math) when every part keeps five words or
    more: "we compute X; we find Y" holds two claims."""
    masked = mask_math(sentence)
    cuts = [m.end() for m in CLAUSE_BREAK.finditer(masked)]
    if not cuts:
        return [(offset, sentence)]
    bounds = [0, *cuts, len(sentence)]
    parts = [(bounds[i], sentence[bounds[i]:bounds[i + 1]].rstrip()) for i in range(len(cuts) + 1)]
    if any(len(plain_text(text).split()) < 5 for _, text in parts):
        return [(offset, sentence)]
    return [(offset + start, text) for start, text in parts]


def ends_sentence(masked: str, stop: int, next_start: int) -> bool:
    """Whether the punctuation at `stop`, followed by whitespace up to `next_start`, ends a
    sentence: the next word must not start lower case, and a period must not close an
    abbreviation or an initial."""
    following = masked[next_start]
    if following.islower():
        return False
    if masked[stop] != ".":
        return True
    word = WORD_BEFORE.search(masked[max(0, stop - WORD_BEFORE_WINDOW):stop])
    if word is None:
        return True
    token = word.group(1)
    if len(token) == 1 and token.isupper():
        # An initial ("J. Maldacena") unless a sentence opener follows ("two-form B. We").
        return next_word(masked, next_start).lower() in SENTENCE_OPENERS
    return token.lower().rstrip(".") not in ABBREVIATIONS


def next_word(text: str, start: int) -> str:
    match = LETTERS.match(text[start:start + 40])
    return match.group(0) if match else ""


def add_sentence(text: str, start: int, end: int, out: list[tuple[int, str]]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        out.append((start + piece.index(stripped[0]), stripped))


def claim_text(sentence: str) -> str:
    """The sentence in plain words: TeX reduced, a leading list number dropped."""
    return LEADING_ENUMERATOR.sub("", plain_text(sentence)).strip()


def score_sentence(sentence: str, position: int, count: int, field: str) -> float:
    """How claim-like a sentence is; ties are broken by position later."""
    words = len(claim_text(sentence).split())
    score = 0.0
    if STRONG_CUE.search(sentence):
        score += STRONG_SCORE
    elif WEAK_CUE.search(sentence):
        score += WEAK_SCORE
    elif FIRST_PERSON.search(sentence):
        score += 1.0
    if position == 0:
        score += 0.5
    elif position == count - 1:
        score += 0.3
    if words < 5:
        score -= 2.0
    elif words > 60:
        score -= 1.0
    if field == "intro":
        score -= 1.0
    return score


def classify_claim(sentence: str, field: str) -> ClaimType:
    """The type whose cue words occur most; a first-person sentence without cues is taken
    as method, any other sentence without cues as context. Ties follow TYPE_ORDER."""
    counts = {kind: len(pattern.findall(sentence)) for kind, pattern in TYPE_CUES.items()}
    contribution = bool(FIRST_PERSON.search(sentence)) and field != "title"
    if not contribution:
        counts["CONTEXTUAL"] += 1
    best = max(TYPE_ORDER, key=lambda kind: (counts[kind], -TYPE_ORDER.index(kind)))
    if counts[best] == 0:
        return "METHODOLOGICAL" if contribution else "CONTEXTUAL"
    return best


def candidate_sentences(paper: PaperText) -> list[Sentence]:
    candidates: list[Sentence] = []
    title = paper.title.strip()
    if title:
        candidates.append(Sentence("title", paper.title.index(title), title, TITLE_SCORE))
    for field in ("abstract", "intro"):
        pieces = [clause for offset, sentence in split_sentences(getattr(paper, field))
                  for clause in split_clauses(offset, sentence)]
        for position, (start, text) in enumerate(pieces):
            score = score_sentence(text, position, len(pieces), field)
            candidates.append(Sentence(field, start, text, score))
    return drop_repeats(candidates)


def drop_repeats(candidates: list[Sentence]) -> list[Sentence]:
    """One sentence per distinct plain text (a title repeated as the first sentence)."""
    seen: set[str] = set()
    kept = []
    for sentence in candidates:
        key = claim_text(sentence.text).lower().rstrip(".")
        if key and key not in seen:
            seen.add(key)
            kept.append(sentence)
    return kept


def choose_sentences(candidates: list[Sentence]) -> list[Sentence]:
    field_order = {"title": 0, "abstract": 1, "intro": 2}
    ranked = sorted(candidates, key=lambda s: (-s.score, field_order[s.field], s.start))
    chosen = ranked[:BASE_CLAIMS]
    if len(ranked) > BASE_CLAIMS and ranked[BASE_CLAIMS].score >= WEAK_SCORE:
        chosen.append(ranked[BASE_CLAIMS])
    return sorted(chosen, key=lambda s: (field_order[s.field], s.start))


def extract_paper_claims(paper: PaperText) -> list[Claim]:
    return [
        Claim(text=claim_text(s.text), type=classify_claim(s.text, s.field),
              source_phrase=s.text)
        for s in choose_sentences(candidate_sentences(paper))
        if claim_text(s.text)
    ]


class OfflineClaimExtractor:
    """ClaimExtractor without a model: 4-5 contribution sentences per paper."""

    name = "offline-sentences-v1"

    def __init__(self) -> None:
        self.usage = Usage()

    def extract(self, papers: list[PaperText]) -> dict[str, list[Claim]]:
        """Claims per paper id; a paper with neither title nor abstract is left out."""
        out: dict[str, list[Claim]] = {}
        for paper in papers:
            self.usage.calls += 1
            claims = extract_paper_claims(paper)
            if claims:
                out[paper.id] = claims
                self.usage.made += 1
            else:
                self.usage.failed += 1
        self.usage.models.add(self.name)
        return out
