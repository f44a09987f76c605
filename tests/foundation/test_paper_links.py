from crase.paper_links import best_link, paper_links


def test_every_known_identifier_becomes_a_link() -> None:
    links = paper_links({"arxiv_id": "hep-th/9711200", "doi": "10.1023/A:1026654312961",
                         "s2_id": "abc123"})
    assert links == {"arxiv": "https://arxiv.org/abs/hep-th/9711200",
                     "doi": "https://doi.org/10.1023/A:1026654312961",
                     "semantic_scholar": "https://www.semanticscholar.org/paper/abc123"}


def test_missing_or_blank_ids_give_no_link_and_a_resolver_prefix_is_not_doubled() -> None:
    assert paper_links({"arxiv_id": " ", "doi": None}) == {}
    assert best_link({"doi": "https://doi.org/10.1/x", "arxiv_id": "1234.5678"}) == \
        "https://doi.org/10.1/x"
    assert best_link({"arxiv_id": "1234.5678"}) == "https://arxiv.org/abs/1234.5678"
    assert best_link({}) is None
