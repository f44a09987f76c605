"""Reference lists read into references: BibTeX, a JSON list and CSV with a header, each
entry or row that names a paper kept, the rest listed by the reader and left out of the
list, and a list that names none or cannot be read refused with a named error. No
database: reading only (resolving them to corpus papers is tested in
tests/search/test_reference_resolution.py)."""

import pytest

from crase import reference_lists
from crase.errors import InvalidRequest, ParseDeadlineExceeded
from crase.reference_lists import parse_bibtex, read_reference_entries, read_reference_list


def test_bibtex_entries_are_read_with_braces_quotes_and_bare_values() -> None:
    items = parse_bibtex('@Article{k1, title = {On {D}-branes and "quotes"}, year = 1999,\n'
                         ' doi = "10.1000/XYZ", eprint = {hep-th/9901001}, author = {A. One '
                         'and B. Two}}\n@string{foo = "bar"}\n@misc{k2, note = {no title}}')
    assert len(items) == 1
    item = items[0]
    assert (item.key, item.title, item.year, item.doi, item.arxiv_id, item.authors) == (
        "k1", 'On D-branes and "quotes"', 1999, "10.1000/XYZ", "hep-th/9901001",
        ["A. One", "B. Two"])
    with pytest.raises(InvalidRequest, match="names no paper"):
        read_reference_list("title,year\n,2001\n")


def test_a_reference_list_that_cannot_be_read_is_a_named_error() -> None:
    for text in ("title\n" + "x" * 200_000 + "\n", "[" * 100_000):
        with pytest.raises(InvalidRequest):
            read_reference_list(text)
    text = "title,id\nTachyons,\n,\nA,b\nLong," + "x" * 1001 + "\n"
    items = read_reference_list(text)
    assert [(item.title, item.id) for item in items] == [("Tachyons", None), ("A", "b"),
                                                          ("Long", None)]
    # The one reader lists the row that names no paper; the list keeps those that do.
    assert [entry.label for entry in read_reference_entries(text, "CSV")] == [
        "1 (Tachyons)", "2 (names no DOI, arXiv id or title)", "3 (A)", "4 (Long)"]


def test_csv_header_names_and_a_json_list_are_read() -> None:
    # A Connected Papers export: capitalised headers, `arXiv` for the eprint, `;` between
    # authors.
    items = read_reference_list("Title, Year ,arXiv,Authors\n"
                                "Tachyons,2001,hep-th/0101001,A. One; B. Two\n")
    assert [(i.key, i.title, i.year, i.arxiv_id, i.authors) for i in items] == [
        ("1", "Tachyons", 2001, "hep-th/0101001", ["A. One", "B. Two"])]
    items = read_reference_list('[{"title": "Tachyons", "doi": "10.1000/x"}, {"id": "p1"}]')
    assert [(i.title, i.doi, i.id) for i in items] == [("Tachyons", "10.1000/x", None),
                                                        (None, None, "p1")]
    with pytest.raises(InvalidRequest, match="JSON reference list"):
        read_reference_list('[{"year": 2001}]')


def test_a_csv_list_is_read_under_a_cpu_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference_lists, "PARSE_CPU_S", 0.0)
    with pytest.raises(ParseDeadlineExceeded, match="the CSV reference list"):
        read_reference_list("title\n" + "Tachyon condensation\n" * 1_000)
