"""PDF evidence windows: the passages of an acquired PDF that the expert is shown.

The native text of every page is joined (pages separated by a newline) and cut into
windows of at most 1,800 characters at a half-window stride. Each window is scored by

    distinct idea terms present
    + 0.25 * sum over idea terms of min(occurrences, cap)       (cap 3 by default)
    + 0.5 per section cue kind present (method, experiment, conclusion)

where a cue is a heading line naming the section (e.g. "3 Method", "Experiments",
"Conclusions") or at least two mentions of its words. Selection: first the best window;
then, for method, experiment and conclusion in turn, the best window with that cue that
contains an idea term and overlaps nothing chosen; then the best remaining non-overlapping
windows with a positive score, up to 6. Ties go to the earlier window. The chosen windows
are returned in reading order, each with its page, offsets and SHA-256, marked partial.

This is a lexical heuristic with section cues: not a section parser, and no model call.
"""

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from crase.idea.candidates import Window
from crase.idea.terms import content_stems

CUE_WORDS = {
    "method": r"methods?|methodology|approach|proposed|algorithm|framework|architecture|model",
    "experiment": r"experiments?|experimental|evaluation|results|datasets?|baselines?|"
                  r"benchmarks?|ablation",
    "conclusion": r"conclusions?|conclude|discussion|future work|limitations|summary",
}
CUE_ORDER = ("method", "experiment", "conclusion")
NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVX]+\.|[A-Z]\.)\s+")
HEADING_WORD = {kind: re.compile(r"^(?:" + words + r")$", re.IGNORECASE)
                for kind, words in CUE_WORDS.items()}
HEADING_MAX_CHARS = 60
MENTION = {kind: re.compile(r"\b(?:" + words + r")\b", re.IGNORECASE)
           for kind, words in CUE_WORDS.items()}
TERM_FREQUENCY_WEIGHT = 0.25
CUE_WEIGHT = 0.5


@dataclass(frozen=True)
class ScoredSpan:
    start: int
    end: int
    score: float
    distinct: int
    terms: tuple[str, ...]
    cues: tuple[str, ...]


def join_pages(pages: Sequence[str]) -> tuple[str, list[int]]:
    """The document text and the offset where each page starts."""
    starts, parts, offset = [], [], 0
    for page in pages:
        starts.append(offset)
        parts.append(page)
        offset += len(page) + 1
    return "\n".join(parts), starts


def window_spans(length: int, size: int) -> list[tuple[int, int]]:
    """(start, end) of windows of `size` characters at stride size // 2 covering the text."""
    if length == 0:
        return []
    stride = max(1, size // 2)
    spans, start = [], 0
    while True:
        end = min(start + size, length)
        spans.append((start, end))
        if end >= length:
            return spans
        start += stride


def heading_kinds(text: str) -> set[str]:
    """Cue kinds named by heading-like lines: short, capitalised, no final full stop, the
    cue word among the first three words after any numbering ("3.1 Proposed Method")."""
    kinds: set[str] = set()
    for line in text.splitlines():
        line = line.strip()
        if not line or len(line) > HEADING_MAX_CHARS or line.endswith(".") or \
                not line.lstrip("0123456789.IVX ")[:1].isupper():
            continue
        words = re.findall(r"[A-Za-z]+", NUMBERING.sub("", line))[:3]
        for kind in CUE_ORDER:
            if any(HEADING_WORD[kind].match(word) for word in words):
                kinds.add(kind)
    return kinds


def section_cues(text: str) -> tuple[str, ...]:
    headings = heading_kinds(text)
    return tuple(kind for kind in CUE_ORDER
                 if kind in headings or len(MENTION[kind].findall(text)) >= 2)


def score_span(text: str, start: int, end: int, terms: set[str], cap: int) -> ScoredSpan:
    counts = Counter(stem for stem in content_stems(text) if stem in terms)
    found = tuple(sorted(counts))
    capped = sum(min(n, cap) for n in counts.values())
    cues = section_cues(text)
    score = len(found) + TERM_FREQUENCY_WEIGHT * capped + CUE_WEIGHT * len(cues)
    return ScoredSpan(start, end, score, len(found), found, cues)


def select_windows(
    paper_id: str,
    pages: Sequence[str],
    idea_terms: Sequence[str],
    window_chars: int = 1800,
    max_windows: int = 6,
    term_cap: int = 3,
) -> list[Window]:
    text, page_starts = join_pages(pages)
    terms = set(idea_terms)
    spans = [score_span(text[s:e], s, e, terms, term_cap)
             for s, e in window_spans(len(text), window_chars)]
    by_score = sorted(spans, key=lambda span: (-span.score, span.start))
    chosen: list[ScoredSpan] = []

    def free(span: ScoredSpan) -> bool:
        return all(span.end <= other.start or span.start >= other.end for other in chosen)

    relevant = [span for span in by_score if span.distinct > 0]
    if relevant:
        chosen.append(relevant[0])
    for kind in CUE_ORDER:
        if len(chosen) >= max_windows:
            break
        match = next((s for s in relevant if kind in s.cues and free(s)), None)
        if match is not None and not any(kind in s.cues for s in chosen):
            chosen.append(match)
    for span in by_score:
        if len(chosen) >= max_windows:
            break
        if span.score > 0 and span.distinct > 0 and free(span):
            chosen.append(span)
    chosen.sort(key=lambda span: span.start)
    return [_window(paper_id, number, span, text, page_starts)
            for number, span in enumerate(chosen, start=1)]


def _window(paper_id: str, number: int, span: ScoredSpan, text: str,
            page_starts: list[int]) -> Window:
    page_index = max(i for i, start in enumerate(page_starts) if start <= span.start)
    body = text[span.start:span.end]
    return Window(
        id=f"{paper_id}:w{number}", page=page_index + 1,
        page_offset=span.start - page_starts[page_index], start=span.start, end=span.end,
        sha256=hashlib.sha256(body.encode("utf-8")).hexdigest(), text=body,
        score=round(span.score, 4), terms=span.terms, cues=span.cues, partial=True,
    )
