"""Generate a synthetic OpenAlex works snapshot, for the dataset import's throughput figure.

    python -m crase.bench.generate_openalex /tmp/openalex-1m --works 1000000

Written as OpenAlex ships it: `works/updated_date=2024-01-01/part_NNN.gz`, gzipped JSON
lines of Work objects with the fields the reader takes (id, doi, title, display_name,
publication_year, publication_date, authorships, abstract_inverted_index,
referenced_works, ids, primary_location, locations, concepts, topics) and a few it skips.

Shaped for the dataset import benchmark: about half the works are the "kept" ones a filter
`--from-year 2016 --field "Computer Science"` selects (computer science, 2016-2026); the
rest are computer science before 2016 or another field. Every work lists about
`--references` referenced works (Poisson); a kept work cites other kept works with
probability `--inside-share` (default 2/3, so about a third of all references end up
inside the kept set) and otherwise works outside it, some of them not in the snapshot at
all, as real reference lists do. Kept works mostly carry an arXiv location, so their
graph id is an arXiv id; the others a DOI or only their OpenAlex id. Deterministic for a
given seed. A 1M-work snapshot is some 2-3 GB of gzip: write it under /tmp, never into the
repository.
"""

import argparse
import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.bench.generate import make_vocabulary

FIRST_YEAR, SPLIT_YEAR, LAST_YEAR = 2000, 2016, 2026
SHARD_WORKS = 100_000
FIRST_ID = 1_000_000  # W1000000 is the first work
MISSING_SHARE = 0.2  # of the references that leave the kept set: works not in the snapshot
ARXIV_SHARE = 0.8  # of the kept works: with an arXiv location
OTHER_FIELDS = ("Medicine", "Biology", "Chemistry", "Physics", "Economics")
CS = "Computer Science"
PARTITION = "updated_date=2024-01-01"


def plan_works(rng: np.random.Generator, works: int,
               ) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.int64]]:
    """Which works are kept (half), which are computer science (the kept ones and some
    older ones), and each work's year."""
    kept = rng.random(works) < 0.5
    computer_science = kept | (rng.random(works) < 0.3)
    years = np.where(computer_science & ~kept, rng.integers(FIRST_YEAR, SPLIT_YEAR, works),
                     np.where(kept, rng.integers(SPLIT_YEAR, LAST_YEAR + 1, works),
                              rng.integers(FIRST_YEAR, LAST_YEAR + 1, works)))
    return kept, computer_science, years


def reference_lists(rng: np.random.Generator, kept: NDArray[np.bool_], start: int, stop: int,
                    mean: float, inside_share: float) -> list[list[int]]:
    """The referenced work numbers of works start..stop (numbers past the snapshot's end
    are works it does not hold)."""
    kept_ids = np.flatnonzero(kept)
    outside_ids = np.flatnonzero(~kept)
    total = len(kept)
    lists = []
    for index in range(start, stop):
        count = int(rng.poisson(mean))
        inside = rng.random(count) < (inside_share if kept[index] else 0.0)
        missing = rng.random(count) < MISSING_SHARE
        targets = np.where(
            inside, kept_ids[rng.integers(0, len(kept_ids), count)],
            np.where(missing, total + rng.integers(0, total, count),
                     outside_ids[rng.integers(0, max(1, len(outside_ids)), count)]))
        lists.append(targets.tolist())
    return lists


def inverted_index(words: list[str]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for position, word in enumerate(words):
        index.setdefault(word, []).append(position)
    return index


def work_record(number: int, year: int, kept: bool, computer_science: bool,
                references: list[int], rng: np.random.Generator,
                vocabulary: NDArray[np.str_], surnames: NDArray[np.str_]) -> dict[str, Any]:
    work_id = f"https://openalex.org/W{FIRST_ID + number}"
    month, day = 1 + (number // SHARD_WORKS) % 12, int(rng.integers(1, 29))
    title = " ".join(vocabulary[rng.integers(0, len(vocabulary), rng.integers(5, 15))])
    abstract = vocabulary[rng.integers(0, len(vocabulary), max(20, int(rng.normal(120, 40))))]
    field = CS if computer_science else str(rng.choice(OTHER_FIELDS))
    arxiv = kept and rng.random() < ARXIV_SHARE
    # Unique while works < 1.2M: the month follows the shard, the number the position.
    arxiv_url = f"https://arxiv.org/abs/{year % 100:02d}{month:02d}.{number % 100_000:05d}"
    doi = None if arxiv or rng.random() < 0.3 else f"https://doi.org/10.5555/gen.{number}"
    location = {"is_oa": True, "landing_page_url": arxiv_url if arxiv else doi,
                "pdf_url": None, "license": None, "version": "submittedVersion",
                "source": {"id": "https://openalex.org/S4306400194",
                           "display_name": "arXiv (Cornell University)" if arxiv
                           else f"Journal of {field}", "type": "repository"}}
    return {
        "id": work_id, "doi": doi, "title": title.capitalize(),
        "display_name": title.capitalize(), "publication_year": year,
        "publication_date": f"{year}-{month:02d}-{day:02d}", "type": "article",
        "ids": {"openalex": work_id, "doi": doi},
        "primary_location": location, "locations": [location],
        "authorships": [
            {"author_position": "middle", "raw_author_name": name.capitalize(),
             "author": {"id": None, "display_name": name.capitalize(), "orcid": None},
             "institutions": []}
            for name in surnames[rng.integers(0, len(surnames), 1 + rng.poisson(2.5))]],
        "abstract_inverted_index": inverted_index(abstract.tolist()),
        "concepts": [{"id": "https://openalex.org/C41008148", "display_name": field,
                      "level": 0, "score": 0.9}],
        "topics": [{"id": "https://openalex.org/T10181", "display_name": f"{field} topic",
                    "field": {"display_name": field}, "subfield": {"display_name": field},
                    "domain": {"display_name": "Physical Sciences"}}],
        "referenced_works": [f"https://openalex.org/W{FIRST_ID + ref}" for ref in references],
        "cited_by_count": 0, "updated_date": "2024-01-01T00:00:00",
    }


def generate(target: Path, works: int, references: float, inside_share: float,
             seed: int = 7) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    kept, computer_science, years = plan_works(rng, works)
    vocabulary, surnames = make_vocabulary(rng), make_vocabulary(rng, 3000)
    folder = target / "works" / PARTITION
    folder.mkdir(parents=True, exist_ok=True)
    counts = {"works": works, "kept_works": int(kept.sum()), "references": 0,
              "references_inside_kept": 0}
    for shard, start in enumerate(range(0, works, SHARD_WORKS)):
        stop = min(start + SHARD_WORKS, works)
        lists = reference_lists(rng, kept, start, stop, references, inside_share)
        with gzip.open(folder / f"part_{shard:03d}.gz", "wt", encoding="utf-8",
                       compresslevel=1) as out:
            for number, refs in zip(range(start, stop), lists, strict=True):
                counts["references"] += len(refs)
                if kept[number]:
                    counts["references_inside_kept"] += sum(
                        1 for ref in refs if ref < works and kept[ref])
                out.write(json.dumps(work_record(
                    number, int(years[number]), bool(kept[number]),
                    bool(computer_science[number]), refs, rng, vocabulary, surnames)) + "\n")
    (target / "stats.json").write_text(json.dumps(counts, indent=1) + "\n")
    return counts


def generator_main(description: str, target_help: str,
                   generate_snapshot: Callable[[Path, int, float, float, int], dict[str, int]]
                   ) -> None:
    """The command line both dataset generators share (the works, their references, the
    share inside the kept set, the seed): parse, generate, print the counts and the time."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("target", type=Path, help=target_help)
    parser.add_argument("--works", type=int, default=1_000_000, help="default 1000000")
    parser.add_argument("--references", type=float, default=20.0,
                        help="mean references per work (default 20)")
    parser.add_argument("--inside-share", type=float, default=2 / 3,
                        help="share of a kept work's references to kept works (default 2/3)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    args = parser.parse_args()
    started = time.monotonic()
    stats = generate_snapshot(args.target, args.works, args.references, args.inside_share,
                              args.seed)
    print(json.dumps(stats, indent=1))
    print(f"written to {args.target} in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    generator_main(__doc__.split("\n\n")[0],
                   "folder to write works/ to (outside the repository)", generate)
