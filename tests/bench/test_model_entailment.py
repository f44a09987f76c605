"""The pure parts of the model-Delta benchmark: the edges of a validation key and the check
that each claim rests on its own sentence."""

import json
from pathlib import Path

from crase.bench.citation_pairs import Corpus
from crase.bench.model_entailment import anchored, key_edges
from crase.scoring.claims import Claim, PaperText

ABSTRACT = ("We compute the tachyon potential in level truncation. The potential has a "
            "minimum near the brane tension. It agrees with the conjecture to one percent.")


def test_the_edges_of_a_validation_key_in_its_order(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text(json.dumps({"items": {
        "e02": {"citing": "a", "cited": "b", "delta": 0.5, "decision": "retain"},
        "e01": {"citing": "c", "cited": "a", "delta": 0.0, "decision": "prune"}}}))
    assert key_edges(key) == [("a", "b"), ("c", "a")]


def test_a_claim_pinned_to_another_sentence_is_not_anchored() -> None:
    corpus = Corpus({"p": PaperText("p", "Tachyon condensation", ABSTRACT)}, {"p": 2000}, [])
    right = Claim(text="The tachyon potential has a minimum near the brane tension.",
                  type="EMPIRICAL", source_phrase="The potential has a minimum near the "
                  "brane tension.")
    wrong = Claim(text="The result agrees with the conjecture to one percent.",
                  type="EMPIRICAL", source_phrase="We compute the tachyon potential in "
                  "level truncation.")
    assert anchored({"p": [right, wrong]}, corpus) == (1, 2)
