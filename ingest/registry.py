"""What a load has seen so far: paper ids (to refuse repeats and conflicts, and to know an
edge's endpoints) and citation edges (to refuse duplicates).

Sized for the 500K-paper, 10M-edge corpora of the benchmark: papers are a dict from id
to a small index, and edges are 64-bit keys (citing index, cited index) in sorted numpy
arrays, about 8 bytes an edge instead of the ~70 of a Python set.
"""

from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from crase.ingest.records import EdgeRow, Paper, Reject, RejectKind

# Given ids that are not in the input, return those that exist elsewhere (the graph).
Resolver = Callable[[set[str]], set[str]]
INDEX_BITS = 32
PLACE_LINE_BITS = 32  # an edge's place: file number above, line below
RECENT_ARRAYS = 32  # new keys are merged into the big sorted array after this many batches


class PaperRegistry:
    """Paper ids of this load (and ids found in the graph), each with a small index and
    where it was first given (file and line), which the reason of a repeat names."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.fingerprints: list[int] = []  # -1 for a paper that exists outside the input
        self.lines: list[int] = []
        self.files: list[int] = []  # index into file_names, per paper
        self.file_names: list[str] = []
        self.file_numbers: dict[str, int] = {}
        self.refused: dict[str, Reject] = {}  # ids of refused rows: what an edge to one says

    def __len__(self) -> int:
        return len(self.index)

    def admit(self, paper: Paper, file: str, line: int) -> Reject | None:
        """None if the paper is new; else the reject for a repeat or a conflicting id."""
        fingerprint = paper_fingerprint(paper)
        known = self.index.get(paper.id)
        if known is None:
            self.index[paper.id] = len(self.lines)
            self.fingerprints.append(fingerprint)
            self.lines.append(line)
            self.files.append(self.file_number(file))
            return None
        return self.repeat_reject(paper, file, line, known, f"id {paper.id}")

    def repeat_reject(self, paper: Paper, file: str, line: int, known: int,
                      subject: str) -> Reject:
        """The reject of a row that gives again the paper of index `known`: a duplicate
        when its fields are the same, else a conflict; the reason says where the kept one
        was given (`subject`: what the two rows share)."""
        first, this = self.location(known), f"{file} line {line}"
        if self.fingerprints[known] == paper_fingerprint(paper):
            return Reject(file, line, RejectKind.DUPLICATE_PAPER,
                          f"{subject} on {this} repeats {first} exactly; the first is kept",
                          paper.title[:200])
        return Reject(file, line, RejectKind.CONFLICTING_PAPER,
                      f"{subject} on {this} was given on {first} with different fields; the "
                      "first is kept", paper.title[:200])

    def file_number(self, file: str) -> int:
        number = self.file_numbers.get(file)
        if number is None:
            number = self.file_numbers[file] = len(self.file_names)
            self.file_names.append(file)
        return number

    def location(self, known: int) -> str:
        """`<file> line <n>` of the paper of index `known`."""
        if self.fingerprints[known] == -1:
            return "a paper already in the graph"
        return f"{self.file_names[self.files[known]]} line {self.lines[known]}"

    def refuse(self, reject: Reject) -> None:
        """Remember a refused row's id (the first refusal), so an edge to it says why."""
        if reject.paper_id is not None:
            self.refused.setdefault(reject.paper_id, reject)

    def unknown_reason(self, paper_id: str) -> str:
        """Why an edge end is no paper: refused in this corpus, or nowhere at all."""
        refused = self.refused.get(paper_id)
        if refused is None:
            return f"paper {paper_id} is neither in the corpus nor in the graph"
        return (f"paper {paper_id} was refused ({refused.file} line {refused.line}, "
                f"{refused.kind.value}); see that reject")

    def add_external(self, paper_id: str) -> None:
        """An id that is not in the input but already in the graph."""
        if paper_id not in self.index:
            self.index[paper_id] = len(self.lines)
            self.fingerprints.append(-1)
            self.lines.append(0)
            self.files.append(-1)


def paper_fingerprint(paper: Paper) -> int:
    # Python's string hash is cached on the string and fast; it is stable within one
    # process, which is all a registry lives for (a resumed load rebuilds it).
    return hash((paper.title, paper.abstract, paper.year, paper.venue, tuple(paper.authors),
                 paper.arxiv_id, paper.doi, paper.s2_id, paper.intro, tuple(paper.categories),
                 paper.date, paper.journal_ref))


class EdgeSet:
    """Set of (citing index, cited index) keys, each with where it was first given (a
    `place`: file number << 32 | line): a big sorted array plus recent small ones."""

    def __init__(self) -> None:
        self.merged: NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self.merged_places: NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self.recent: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []

    def __len__(self) -> int:
        return len(self.merged) + sum(len(keys) for keys, _ in self.recent)

    def add(self, keys: NDArray[np.int64], places: NDArray[np.int64],
            ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        """Add a batch of keys given at `places`: True where a key was seen before (also
        earlier in the batch), and per key the place it was first given."""
        if len(keys) == 0:
            return np.ones(0, dtype=bool), np.empty(0, dtype=np.int64)
        unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        seen, seen_places = self.lookup(unique)
        first_places = np.where(seen, seen_places, places[first])
        duplicate = np.ones(len(keys), dtype=bool)
        duplicate[first[~seen]] = False
        self.recent.append((unique[~seen], places[first[~seen]]))
        if len(self.recent) >= RECENT_ARRAYS:
            self.compact()
        return duplicate, first_places[inverse.reshape(-1)]

    def lookup(self, sorted_keys: NDArray[np.int64],
               ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        """Which keys are in the set, and where each found one was first given."""
        found = np.zeros(len(sorted_keys), dtype=bool)
        places = np.zeros(len(sorted_keys), dtype=np.int64)
        for keys, key_places in ((self.merged, self.merged_places), *self.recent):
            if len(keys):
                at = np.searchsorted(keys, sorted_keys).clip(max=len(keys) - 1)
                hit = keys[at] == sorted_keys
                places[hit] = key_places[at[hit]]
                found |= hit
        return found, places

    def compact(self) -> None:
        fresh = np.concatenate([keys for keys, _ in self.recent])
        fresh_places = np.concatenate([places for _, places in self.recent])
        order = np.argsort(fresh, kind="stable")
        fresh, fresh_places = fresh[order], fresh_places[order]
        at = np.searchsorted(self.merged, fresh)
        self.merged = np.insert(self.merged, at, fresh)
        self.merged_places = np.insert(self.merged_places, at, fresh_places)
        self.recent = []


def edge_place(file_number: int, line: int) -> int:
    """Where an edge was given, as one int64: the file's number and the line."""
    return (file_number << PLACE_LINE_BITS) | line


def repeated_edge_reason(citing: str, cited: str, first_file: str, first_line: int) -> str:
    """The reason of a duplicate edge: the one wording of both edge paths."""
    return (f"{citing} -> {cited} was given before, on {first_file} line {first_line}; "
            "the first is kept")


class CitationRegistry:
    """Checks edges against the papers and against the edges seen before."""

    def __init__(self, papers: PaperRegistry, resolve: Resolver | None = None) -> None:
        self.papers = papers
        self.resolve = resolve
        self.edges = EdgeSet()
        self.missing: set[str] = set()  # ids the resolver did not find

    def admit(self, rows: Iterable[EdgeRow], file: str) -> tuple[list[EdgeRow], list[Reject]]:
        """The new edges of a batch, in order, and the rejects (unknown paper, duplicate)."""
        rows = list(rows)
        self.resolve_unknown(rows)
        index = self.papers.index
        known: list[EdgeRow] = []
        keys: list[int] = []
        rejects: list[Reject] = []
        for row in rows:
            citing, cited = index.get(row.citing), index.get(row.cited)
            if citing is None or cited is None:
                absent = row.citing if citing is None else row.cited
                rejects.append(Reject(file, row.line, RejectKind.UNKNOWN_PAPER,
                                      self.papers.unknown_reason(absent),
                                      f"{row.citing},{row.cited}"))
                continue
            known.append(row)
            keys.append((citing << INDEX_BITS) | cited)
        place = edge_place(self.papers.file_number(file), 0)
        duplicate, first = self.edges.add(np.array(keys, dtype=np.int64),
                                          np.array([place | row.line for row in known],
                                                   dtype=np.int64))
        accepted = []
        for row, is_duplicate, was in zip(known, duplicate.tolist(), first.tolist(),
                                          strict=True):
            if is_duplicate:
                first_file, first_line = self.place_of(was)
                rejects.append(Reject(file, row.line, RejectKind.DUPLICATE_EDGE,
                                      repeated_edge_reason(row.citing, row.cited, first_file,
                                                           first_line),
                                      f"{row.citing},{row.cited}"))
            else:
                accepted.append(row)
        rejects.sort(key=lambda reject: reject.line)
        return accepted, rejects

    def place_of(self, place: int) -> tuple[str, int]:
        """The file and line of an edge's place."""
        return (self.papers.file_names[place >> PLACE_LINE_BITS],
                place & ((1 << PLACE_LINE_BITS) - 1))

    def is_known(self, paper_id: str) -> bool:
        """In the input or (once `resolve_unknown` has run for it) in the graph."""
        return paper_id in self.papers.index

    def resolve_unknown(self, rows: list[EdgeRow]) -> None:
        if self.resolve is None:
            return
        index = self.papers.index
        unknown = {paper_id for row in rows for paper_id in (row.citing, row.cited)
                   if paper_id not in index and paper_id not in self.missing}
        if not unknown:
            return
        found = self.resolve(unknown)
        for paper_id in found:
            self.papers.add_external(paper_id)
        self.missing |= unknown - found
