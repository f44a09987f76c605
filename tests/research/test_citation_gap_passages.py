"""The passages of a draft sent to POST /citation-gaps: each costs a text search and an
embedding, so their number is bounded whatever the draft."""

from crase.research.citation_gaps import MAX_PASSAGES, cut_passages


def test_a_draft_of_thousands_of_sentences_has_at_most_max_passages() -> None:
    # Each passage costs a text search and an embedding: 1,750 took 52 s over HTTP.
    passages = cut_passages("a" * 6_000 + "1" + ". Xy" * 3_499, 2)
    assert len(passages) == MAX_PASSAGES
    assert passages[-1].text.endswith("Xy")
    prose = " ".join(f"Sentence number {i} is here." for i in range(150))
    assert len(cut_passages(prose, 2)) == 75
