"""The run page's words for a result placed by the learned order: its largest feature terms."""

from crase.api.pages.result_views import describe_evidence


def test_the_run_page_names_the_features_that_placed_a_result() -> None:
    paper = {"id": "p", "evidence": {
        "seed": False, "reached_from": "s", "path": [], "strongest_edges": [],
        "ranking_features": {"text_hit_votes": 2.43, "neighbourhood_cited_by": -1.13}}}
    summary = describe_evidence(paper, {"s": "A seed"}, {})["summary"]
    assert summary[-1] == ("Placed by the learned order; its largest terms: text_hit_votes "
                           "+2.43, neighbourhood_cited_by -1.13.")
