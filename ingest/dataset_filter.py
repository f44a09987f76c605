"""Which works of a bulk dataset go into the corpus: the filters applied while a snapshot
streams past, so a terabyte of OpenAlex or Semantic Scholar yields a field's corpus.

A work is kept when every filter given keeps it: its year is in the range (a work without
a year is left out once a range is given), one of its labels is a field asked for (labels
are what the publisher files a work under: OpenAlex concepts and topics with their
subfields, fields and domains; Semantic Scholar fields of study; compared without case),
it has an abstract, it has an arXiv id, and (with an id list) one of its ids is listed.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crase.errors import CorpusError
from crase.ingest.records import Paper
from crase.paper_identity import normalise_arxiv_id, normalise_doi

OPENALEX_PREFIX = "https://openalex.org/"


@dataclass(frozen=True)
class DatasetFilter:
    from_year: int | None = None
    to_year: int | None = None
    fields: frozenset[str] = field(default_factory=frozenset)  # lower case
    require_abstract: bool = False
    require_arxiv: bool = False
    ids: frozenset[str] | None = None  # see `read_id_list`

    @classmethod
    def build(cls, from_year: int | None = None, to_year: int | None = None,
              fields: Iterable[str] = (), require_abstract: bool = False,
              require_arxiv: bool = False, id_list: Path | None = None) -> "DatasetFilter":
        if from_year is not None and to_year is not None and from_year > to_year:
            raise CorpusError(f"the year range {from_year}..{to_year} is empty")
        return cls(from_year, to_year, frozenset(name.strip().lower() for name in fields),
                   require_abstract, require_arxiv,
                   read_id_list(id_list) if id_list is not None else None)

    @property
    def is_empty(self) -> bool:
        return self == DatasetFilter()

    def keeps(self, paper: Paper, own_id: str, labels: Iterable[str]) -> bool:
        return (self.keeps_year(paper.year)
                and (not self.fields or any(label.lower() in self.fields for label in labels))
                and (not self.require_abstract or bool(paper.abstract))
                and (not self.require_arxiv or paper.arxiv_id is not None)
                and (self.ids is None or not self.ids.isdisjoint(
                    (own_id, paper.id, paper.doi, paper.arxiv_id))))

    def leaves_out_early(self, year: Any, labels: Iterable[str]) -> bool:
        """True when a record's year as given (an integer) or its labels already fail the
        filter: such a record is left out before it is mapped and checked (half the time
        of a snapshot goes into the works a filter drops)."""
        if isinstance(year, int) and not isinstance(year, bool) and not self.keeps_year(year):
            return True
        return bool(self.fields) and not any(label.lower() in self.fields for label in labels)

    def keeps_year(self, year: int | None) -> bool:
        if self.from_year is None and self.to_year is None:
            return True
        return year is not None and (self.from_year or year) <= year <= (self.to_year or year)

    def describe(self) -> dict[str, Any]:
        """The filter as plain data: what a staged corpus records it was made with."""
        return {"from_year": self.from_year, "to_year": self.to_year,
                "fields": sorted(self.fields), "require_abstract": self.require_abstract,
                "require_arxiv": self.require_arxiv,
                "ids": None if self.ids is None else sorted(self.ids)}


def read_id_list(path: Path) -> frozenset[str]:
    """The ids of a list file, one a line (`#` starts a comment): a dataset's own id (an
    OpenAlex id with or without its URL, a Semantic Scholar corpus id), a DOI or an arXiv
    id, each in the spelling the readers compare (`normalise_doi`, `normalise_arxiv_id`)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise CorpusError(f"cannot read the id list {path}: {err}") from err
    ids: set[str] = set()
    for line in lines:
        entry = line.split("#", 1)[0].strip()
        if entry:
            ids.add(entry.removeprefix(OPENALEX_PREFIX))
            ids.update(key for key in (normalise_doi(entry), normalise_arxiv_id(entry)) if key)
    return frozenset(ids)
