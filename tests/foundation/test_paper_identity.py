"""Paper identity, on real identifiers: every spelling of one DOI or arXiv id gives one
key, a link keeps the DOI as given, and titles compare by their words."""

import pytest

from crase.paper_identity import (
    arxiv_from_doi,
    lookup_keys,
    normalise_arxiv_id,
    normalise_doi,
    normalise_title,
    paper_key,
    strip_doi_prefix,
    title_similarity,
)
from crase.paper_links import paper_links

# (as written somewhere, the comparison key)
DOIS = [
    ("10.1023/A:1026654312961", "10.1023/a:1026654312961"),
    ("https://doi.org/10.1023/A:1026654312961", "10.1023/a:1026654312961"),
    ("http://doi.org/10.1023/A:1026654312961", "10.1023/a:1026654312961"),
    ("https://dx.doi.org/10.1023/A:1026654312961", "10.1023/a:1026654312961"),
    ("http://dx.doi.org/10.1023/A:1026654312961", "10.1023/a:1026654312961"),
    ("HTTPS://DOI.ORG/10.1023/A:1026654312961", "10.1023/a:1026654312961"),
    ("doi:10.1103/PhysRevLett.80.4859", "10.1103/physrevlett.80.4859"),
    ("DOI: 10.1103/PhysRevLett.80.4859", "10.1103/physrevlett.80.4859"),
    ("  10.1103/PhysRevLett.80.4859\n", "10.1103/physrevlett.80.4859"),
    ("10.48550/arXiv.2101.01234", "10.48550/arxiv.2101.01234"),
    ("", None),
    ("   ", None),
    ("doi:", None),
    (None, None),
]

ARXIV_IDS = [
    ("hep-th/9711200", "hep-th/9711200"),  # old form: archive/YYMMNNN
    ("hep-th/9711200v3", "hep-th/9711200"),
    ("arXiv:hep-th/9711200v1", "hep-th/9711200"),
    ("math.AG/0601001", "math.ag/0601001"),  # old form with a subject class
    ("0704.0001", "0704.0001"),  # new form, four-digit number (2007-2014)
    ("0704.0001v2", "0704.0001"),
    ("2101.01234", "2101.01234"),  # new form, five-digit number (from 2015)
    ("2101.01234v12", "2101.01234"),
    ("arXiv:2101.01234v2", "2101.01234"),
    ("ARXIV: 2101.01234", "2101.01234"),
    ("https://arxiv.org/abs/2101.01234v2", "2101.01234"),
    ("https://arxiv.org/pdf/2101.01234v2.pdf", "2101.01234"),
    (" 1703.06114v1 ", "1703.06114"),
    ("", None),
    ("arXiv:", None),
    (None, None),
]


@pytest.mark.parametrize(("written", "key"), DOIS)
def test_every_spelling_of_a_doi_gives_one_key(written: str | None, key: str | None) -> None:
    assert normalise_doi(written) == key


@pytest.mark.parametrize(("written", "key"), ARXIV_IDS)
def test_every_spelling_of_an_arxiv_id_gives_one_key(written: str | None,
                                                      key: str | None) -> None:
    assert normalise_arxiv_id(written) == key


def test_a_link_keeps_the_doi_as_given_without_its_prefix() -> None:
    assert strip_doi_prefix(" http://dx.doi.org/10.1023/A:1026654312961 ") == \
        "10.1023/A:1026654312961"
    for written in ("https://doi.org/10.1023/A:1026654312961", "doi:10.1023/A:1026654312961",
                    "http://dx.doi.org/10.1023/A:1026654312961"):
        assert paper_links({"doi": written}) == \
            {"doi": "https://doi.org/10.1023/A:1026654312961"}


def test_titles_reduce_to_their_words() -> None:
    assert normalise_title("Deep  Sets!") == "deep sets"
    assert normalise_title("Gödel's Théorème") == "godel s theoreme"
    # A hyphen splits words, so a title with and without it is the same title.
    assert normalise_title("Chern-Simons theory") == normalise_title("Chern Simons Theory")
    # Letters outside the Latin script are words too: such a title is never empty.
    assert normalise_title("弦理论") == "弦理论"


def test_title_similarity_is_the_overlap_of_the_word_sets() -> None:
    assert title_similarity("The Large N Limit of Superconformal Field Theories and "
                            "Supergravity", "The large-N limit of superconformal field "
                            "theories and supergravity.") == 1.0
    assert title_similarity("Deep Sets", "Deep Sets revisited") == pytest.approx(2 / 3)
    assert title_similarity("Deep Sets", "") == 0.0
    assert title_similarity("!!", "??") == 0.0


# arXiv's own DOIs (10.48550/arXiv.<id>) name the preprint: the same work as its arXiv id.
ARXIV_DOIS = [
    ("10.48550/arXiv.2101.01234", "2101.01234"),
    ("10.48550/ARXIV.2101.01234", "2101.01234"),
    ("https://doi.org/10.48550/arXiv.2101.01234", "2101.01234"),
    ("doi:10.48550/arxiv.hep-th/9901001", "hep-th/9901001"),
    ("10.48550/arXiv.2101.01234v2", "2101.01234"),
    ("10.1103/PhysRevLett.80.4859", None),
    ("10.48550/arXiv.", None),
    (None, None),
]


@pytest.mark.parametrize(("doi", "arxiv_key"), ARXIV_DOIS)
def test_an_arxiv_doi_names_its_arxiv_id(doi: str | None, arxiv_key: str | None) -> None:
    assert arxiv_from_doi(doi) == arxiv_key


@pytest.mark.parametrize(("doi", "arxiv_key"), [row for row in ARXIV_DOIS if row[1]])
def test_a_work_known_by_its_arxiv_doi_has_the_key_of_its_arxiv_id(doi: str,
                                                                   arxiv_key: str) -> None:
    assert paper_key(None, doi, "s2:123") == paper_key(arxiv_key, None, "openalex:W1")
    assert paper_key(None, doi, "s2:123") == arxiv_key


def test_a_publisher_doi_still_keys_a_work_without_an_arxiv_id() -> None:
    assert paper_key(None, "https://doi.org/10.1103/PhysRevLett.80.4859", "s2:1") == \
        "doi:10.1103/physrevlett.80.4859"
    assert paper_key(None, None, "s2:1") == "s2:1"


@pytest.mark.parametrize(("name", "arxiv_ids", "dois"), [
    ("arXiv:hep-th/9901001v2", ["hep-th/9901001"], []),
    ("hep-th/9901001", ["hep-th/9901001"], []),
    ("2101.01234v3", ["2101.01234"], []),
    ("https://doi.org/10.1103/PhysRevLett.80.4859", [], ["10.1103/physrevlett.80.4859"]),
    ("https://doi.org/10.48550/arXiv.2101.01234", ["2101.01234"],
     ["10.48550/arxiv.2101.01234"]),
])
def test_a_name_gives_the_keys_it_is_looked_up_by(name: str, arxiv_ids: list[str],
                                                  dois: list[str]) -> None:
    keys = lookup_keys(name)
    assert keys.arxiv_ids == arxiv_ids and keys.dois == dois
    assert name.strip() in keys.ids
