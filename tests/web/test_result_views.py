"""The run page's words for a result placed by the learned order: its largest feature terms."""

from crase.api.pages.result_views import describe_evidence


def test_the_run_page_names_the_features_that_placed_a_result() -> None:
    paper = {"id": "p", "evidence": {
        "seed": False, "reached_from": "s", "path": [], "strongest_edges": [],
        "ranking_features": {"text_hit_votes": 2.43, "neighbourhood_cited_by": -1.13}}}
    summary = describe_evidence(paper, {"s": "A seed"}, {})["summary"]
    assert summary[-1] == ("Placed by the learned order; its largest terms: text_hit_votes "
                           "+2.43, neighbourhood_cited_by -1.13.")


def test_a_result_of_a_search_from_papers_names_the_given_paper() -> None:
    from crase.api.pages.result_views import linked_results

    edge = {"citing": "p", "cited": "g", "delta": None}
    paper = {"id": "p", "rank": 1, "title": "A result", "authors": ["A. One"], "year": 2001,
             "evidence": {"seed": False, "reached_from": "g", "path": [edge],
                          "strongest_edges": []}}
    titles = {"g": "The given paper", "p": "A result"}
    summary = describe_evidence(paper, titles, {}, {"g"})["summary"]
    assert summary[0] == "From the given paper “The given paper”, over 1 retained citation edge."
    assert describe_evidence(paper, titles, {})["summary"][0].startswith("Reached from the seed")
    seeds = [{"paper_id": "g", "title": "The given paper", "sub_query_index": -1}]
    [listed] = linked_results({"results": [paper], "seeds": seeds})
    assert listed["how"] == "1 citation edge from the given paper “The given paper”"
