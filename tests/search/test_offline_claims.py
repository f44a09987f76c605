"""The offline claim extractor's sentence splitter on hostile text: a draft sent to
POST /citation-gaps or a stored abstract reaches it, so it must take time linear in the text
and never hold the interpreter for long (the other threads of a server wait meanwhile)."""

import pytest

from crase.errors import ParseDeadlineExceeded
from crase.scoring.claims import PaperText
from crase.scoring.tex import mask_math, plain_text, tex_to_unicode
from crase.search.roles.offline_claims import extract_paper_claims, split_sentences
from crase.text_limits import CpuDeadline
from tests.interpreter_pauses import measure_pauses

# A long word, then many short sentences: the word before each period was searched for over
# the whole text before it, each search quadratic in the word (15 s of CPU here for 4,000
# characters; a 20,000-character draft of this shape did not finish in 150 s).
LONG_WORD_THEN_SENTENCES = "a" * 2_000 + "1" + ". Xy" * 500

# TeX that made a math or spacing pattern quadratic (0.4 to 2 s of one regex call each at
# 20,000 characters): openings without their close, and a run of spaces.
HOSTILE_TEX = {
    "display math without its close": "\\[ x" * 5_000,
    "inline math without its close": "\\( " * 7_000,
    "dollars without their close": "$$ " * 7_000,
    "spaces before a letter": " " * 20_000 + "x",
}


def test_a_long_word_before_many_sentence_ends_is_split_in_linear_time() -> None:
    measured = measure_pauses(lambda: split_sentences(LONG_WORD_THEN_SENTENCES))
    assert not isinstance(measured.result, Exception), measured.result
    assert len(measured.result) == 501
    assert measured.cpu_s < 1.0
    assert measured.longest_pause_s < 0.5


def test_a_draft_of_one_twenty_thousand_character_word_is_split_at_once() -> None:
    draft = "a" * 6_000 + "1" + ". Xy" * 3_499
    measured = measure_pauses(lambda: split_sentences(draft))
    assert len(measured.result) == 3_500
    assert measured.cpu_s < 1.0
    assert measured.longest_pause_s < 0.5


@pytest.mark.parametrize("text", list(HOSTILE_TEX.values()), ids=list(HOSTILE_TEX))
def test_hostile_tex_is_read_without_holding_the_interpreter(text: str) -> None:
    def read() -> None:
        mask_math(text)
        plain_text(text)
        tex_to_unicode(text)
        extract_paper_claims(PaperText(id="p", title="T", abstract=text))

    measured = measure_pauses(read)
    assert measured.result is None, measured.result
    assert measured.cpu_s < 1.5
    assert measured.longest_pause_s < 0.25


def test_the_splitter_stops_at_its_deadline() -> None:
    with pytest.raises(ParseDeadlineExceeded, match="the sentences of a text"):
        split_sentences("A. B. " * 200_000, CpuDeadline(0.0, "the sentences of a text"))


def test_abbreviations_and_initials_still_read_after_a_long_word() -> None:
    text = "a" * 500 + " was shown by J. Maldacena et al. in Phys. Rev. D. We extend it."
    assert [s for _, s in split_sentences(text)] == [text[:-14], "We extend it."]
