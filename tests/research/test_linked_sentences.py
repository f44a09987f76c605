"""The linked-sentence miner labels pairs by their linking phrase the way SciNLI was
built: adjacent sentences for the linked classes, distant ones for neutral."""

import random

from crase.research.linked_sentences import mine_pairs, neutral_pair, strip_linking_phrase


def test_linking_phrases_label_and_leave_the_sentence() -> None:
    assert strip_linking_phrase("However, the bound is not saturated in four dimensions.") == (
        "contrasting", "the bound is not saturated in four dimensions.")
    assert strip_linking_phrase("That is, the theory flows to a free fixed point.") == (
        "entailment", "the theory flows to a free fixed point.")
    assert strip_linking_phrase("Thus the anomaly cancels for every gauge group.") == (
        "reasoning", "the anomaly cancels for every gauge group.")
    assert strip_linking_phrase("Thusly named fields appear.") is None
    assert strip_linking_phrase("However, short.") is None


def test_mined_pairs_come_from_adjacent_sentences_and_neutral_from_distant_ones() -> None:
    abstract = ("We study D-branes in a constant background field. The open-string "
                "spectrum is computed exactly. However, the closed-string sector is left "
                "for later work. Thus the tachyon potential is known to all orders here.")
    pairs = mine_pairs([abstract], "mined:test", neutral_share=1.0, seed=1)
    linked = [p for p in pairs if p.label != "neutral"]
    assert [(p.label, p.premise[:20]) for p in linked] == [
        ("contrasting", "The open-string spec"), ("reasoning", "However, the closed-")]
    assert linked[0].hypothesis.startswith("the closed-string sector")
    sentences = [f"Sentence number {i} of the abstract." for i in range(4)]
    for seed in range(20):
        pair = neutral_pair(sentences, "s", random.Random(seed))
        assert pair is not None
        first, second = (sentences.index(pair.premise),
                         [s.lower() for s in sentences].index(pair.hypothesis.lower()))
        assert abs(first - second) >= 2 and pair.hypothesis[0].islower()
    assert neutral_pair(sentences[:2], "s", random.Random(0)) is None
