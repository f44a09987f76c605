"""Ready-made calls for the client tests."""

from functools import partial

from crase.models.chat import ModelCall
from crase.prompts.catalog import data_block, load_prompt
from crase.prompts.replies import EntailmentReply, check_entailment

GOOD_2X3 = '{"matrix": [[0.9, 0.1, 0.0], [0.2, 0.7, 0.05]]}'


def entailment_call(
    n_citing: int = 2, n_cited: int = 3, tag: str = ""
) -> ModelCall[EntailmentReply]:
    """A real score_entailment call; `tag` makes the inputs (and the cache key) distinct."""
    citing = [{"id": f"U{i}", "claim": f"citing claim {i} {tag}"} for i in range(1, n_citing + 1)]
    cited = [{"id": f"V{j}", "claim": f"cited claim {j} {tag}"} for j in range(1, n_cited + 1)]
    return ModelCall(
        load_prompt("score_entailment"),
        {
            "citing_claims": data_block(citing), "cited_claims": data_block(cited),
            "n_citing": n_citing, "n_cited": n_cited,
        },
        subject=f"edge {tag}", stage="entailment",
        check=partial(check_entailment, n_citing=n_citing, n_cited=n_cited),
    )
