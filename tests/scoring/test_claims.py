"""The offline claim extractor on hand-written and real hep-th text."""

import json
from pathlib import Path

import pytest

from crase.scoring.claims import PaperText
from crase.search.roles.offline_claims import (
    OfflineClaimExtractor,
    claim_text,
    classify_claim,
    split_sentences,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "papers.jsonl"

ABSTRACT = (
    "String theory on AdS$_5\\times S^5$ has been studied intensively in recent years. "
    "In this paper we compute the one-loop correction to the energy at $\\lambda = 1.5$, "
    "following J. Maldacena et al. in Ref. 3. "
    "We find agreement with the numerical data to within 2%. "
    "The method, e.g. the use of the Bethe ansatz, is reviewed in Sec. 2. "
    "We propose a new algorithm for the spectrum. "
    "Finally, we prove that the dual field theory is integrable."
)


def test_sentences_survive_math_abbreviations_and_initials() -> None:
    sentences = [text for _, text in split_sentences(ABSTRACT)]
    assert sentences == [
        "String theory on AdS$_5\\times S^5$ has been studied intensively in recent years.",
        "In this paper we compute the one-loop correction to the energy at $\\lambda = 1.5$, "
        "following J. Maldacena et al. in Ref. 3.",
        "We find agreement with the numerical data to within 2%.",
        "The method, e.g. the use of the Bethe ansatz, is reviewed in Sec. 2.",
        "We propose a new algorithm for the spectrum.",
        "Finally, we prove that the dual field theory is integrable.",
    ]


def test_offsets_point_into_the_text() -> None:
    text = "A  first sentence here.\n  Then a $x.$ And $y = 2.5$ at last!  "
    spans = split_sentences(text)
    assert [s for _, s in spans] == ["A  first sentence here.", "Then a $x.$",
                                     "And $y = 2.5$ at last!"]
    for offset, sentence in spans:
        assert text[offset : offset + len(sentence)] == sentence


def test_a_symbol_before_a_sentence_opener_ends_the_sentence() -> None:
    text = "Strings couple to a two-form B. We present the action. See A. Sen for more."
    assert [s for _, s in split_sentences(text)] == [
        "Strings couple to a two-form B.", "We present the action.", "See A. Sen for more."
    ]


def test_contribution_sentences_are_preferred_and_kept_in_text_order() -> None:
    paper = PaperText("p1", "Integrability of the one-loop string spectrum", ABSTRACT)
    claims = OfflineClaimExtractor().extract([paper])["p1"]
    assert 4 <= len(claims) <= 5
    phrases = [c.source_phrase for c in claims]
    # The background sentence and the "reviewed in Sec. 2" sentence lose to the cue ones.
    assert not any(p.startswith("String theory on AdS") for p in phrases)
    assert not any("reviewed in Sec" in p for p in phrases)
    assert any(p.startswith("Finally, we prove") for p in phrases)
    positions = [(0 if p in paper.title else 1, ABSTRACT.find(p)) for p in phrases]
    assert positions == sorted(positions)
    for claim in claims:
        assert claim.source_phrase in paper.title or claim.source_phrase in paper.abstract


def test_claim_text_is_plain_while_the_source_phrase_stays_verbatim() -> None:
    paper = PaperText("p2", "T", ABSTRACT)
    claims = OfflineClaimExtractor().extract([paper])["p2"]
    computed = next(c for c in claims if "one-loop" in c.text)
    assert "$" in computed.source_phrase and "\\lambda" in computed.source_phrase
    assert "$" not in computed.text and "\\" not in computed.text
    assert "lambda = 1.5" in computed.text
    assert claim_text("2. The  K\\\"{a}hler   potential $K$.") == "The Kahler potential K."


def test_types_follow_the_cue_words() -> None:
    assert classify_claim("Finally, we prove that the dual theory is integrable.",
                          "abstract") == "THEORETICAL"
    assert classify_claim("We propose a new algorithm for the spectrum.",
                          "abstract") == "METHODOLOGICAL"
    assert classify_claim("We find agreement with the numerical data to within 2%.",
                          "abstract") == "EMPIRICAL"
    assert classify_claim("String theory has been studied intensively in recent years.",
                          "abstract") == "CONTEXTUAL"
    assert classify_claim("We look at it.", "abstract") == "METHODOLOGICAL"
    assert classify_claim("Cats sleep.", "abstract") == "CONTEXTUAL"


def test_semicolon_clauses_become_separate_claims() -> None:
    abstract = ("We compute the three-point functions of chiral operators; we find that "
                "they are not renormalized at one loop. Short; clause.")
    sentences = [s for _, s in split_sentences(abstract)]
    paper = PaperText("p3", "", abstract)
    phrases = [c.source_phrase for c in OfflineClaimExtractor().extract([paper])["p3"]]
    assert len(sentences) == 2
    assert phrases == ["We compute the three-point functions of chiral operators;",
                       "we find that they are not renormalized at one loop.",
                       "Short; clause."]


def test_title_only_paper_gets_one_claim_and_empty_paper_none() -> None:
    extractor = OfflineClaimExtractor()
    out = extractor.extract([
        PaperText("t", "  Tachyon Condensation in String Field Theory "),
        PaperText("e", "", ""),
    ])
    assert list(out) == ["t"]
    [claim] = out["t"]
    assert claim.text == claim.source_phrase == "Tachyon Condensation in String Field Theory"
    assert extractor.usage.calls == 2
    assert extractor.usage.made == 1 and extractor.usage.failed == 1
    assert extractor.usage.models == {"offline-sentences-v1"}


def test_introduction_sentences_count_but_rank_below_the_abstract() -> None:
    paper = PaperText("p4", "A title", "We show one thing about branes. We show another thing "
                      "about strings.", intro="We show a third thing about membranes here.")
    claims = OfflineClaimExtractor().extract([paper])["p4"]
    assert [c.source_phrase for c in claims][-1] == "We show a third thing about membranes here."
    full = PaperText("p5", "A title", " ".join(
        f"We show result number {n} about branes." for n in range(1, 6)),
        intro="We show a third thing about membranes here.")
    phrases = [c.source_phrase for c in OfflineClaimExtractor().extract([full])["p5"]]
    assert len(phrases) == 5 and all(p.startswith("We show result") for p in phrases)


@pytest.mark.parametrize("limit", [300])
def test_real_abstracts_give_verbatim_typed_claims_deterministically(limit: int) -> None:
    rows = [json.loads(line) for line in SAMPLE.open(encoding="utf-8")][:limit]
    papers = [PaperText(r["id"], r["title"], r["abstract"]) for r in rows]
    first = OfflineClaimExtractor().extract(papers)
    second = OfflineClaimExtractor().extract(papers)
    assert first == second
    assert set(first) == {p.id for p in papers}
    counts = [len(claims) for claims in first.values()]
    assert max(counts) == 5 and sum(c >= 4 for c in counts) > 0.8 * len(counts)
    for paper in papers:
        for claim in first[paper.id]:
            assert claim.source_phrase in paper.title or claim.source_phrase in paper.abstract
            assert claim.text and "$" not in claim.text
