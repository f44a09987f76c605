"""Generate synthetic Semantic Scholar datasets (papers, abstracts, citations), for the
dataset import's throughput figure in that format.

    python -m crase.bench.generate_s2ag /tmp/s2ag-1m --works 1000000

Shaped like `crase.bench.generate_openalex`'s snapshot, from the same plan (half the works
kept by `--from-year 2016 --field "Computer Science"`, about 20 references each, a third of
all of them inside the kept set), written as the datasets API hands them out:
`papers/part-NNN.gz`, `abstracts/part-NNN.gz`, `citations/part-NNN.gz`, gzipped JSON
lines. A reference to a work the snapshot does not
hold has a null `citedcorpusid`, as an unresolved reference has in the real dataset;
one citation in ten is influential, and each context has one to two intents. Write it
under /tmp, never into the repository.
"""

import gzip
import json
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from crase.bench.generate import make_vocabulary
from crase.bench.generate_openalex import (
    CS,
    OTHER_FIELDS,
    SHARD_WORKS,
    generator_main,
    plan_works,
    reference_lists,
)

FIRST_CORPUS_ID = 10_000_000
INTENTS = ("background", "methodology", "result")
INFLUENTIAL_SHARE = 0.1


def paper_record(number: int, year: int, computer_science: bool, rng: np.random.Generator,
                 vocabulary: NDArray[np.str_], surnames: NDArray[np.str_]) -> dict[str, Any]:
    corpus_id = FIRST_CORPUS_ID + number
    month = 1 + (number // SHARD_WORKS) % 12
    field = CS if computer_science else str(rng.choice(OTHER_FIELDS))
    arxiv = computer_science and year >= 2016 and rng.random() < 0.8
    title = " ".join(vocabulary[rng.integers(0, len(vocabulary), rng.integers(5, 15))])
    return {
        "corpusid": corpus_id,
        "externalids": {"ArXiv": f"{year % 100:02d}{month:02d}.{number % 100_000:05d}"
                        if arxiv else None,
                        "DOI": None if arxiv else f"10.5555/s2gen.{number}",
                        "CorpusId": str(corpus_id), "MAG": None, "DBLP": None, "ACL": None,
                        "PubMed": None, "PubMedCentral": None},
        "url": f"https://www.semanticscholar.org/paper/{corpus_id:040x}",
        "title": title.capitalize(),
        "authors": [{"authorId": str(int(rng.integers(1, 10**8))), "name": name.capitalize()}
                    for name in surnames[rng.integers(0, len(surnames), 1 + rng.poisson(2.5))]],
        "venue": f"Journal of {field}", "publicationvenueid": None, "year": year,
        "referencecount": 0, "citationcount": 0, "influentialcitationcount": 0,
        "isopenaccess": False, "s2fieldsofstudy": [{"category": field, "source": "external"}],
        "publicationtypes": ["JournalArticle"],
        "publicationdate": f"{year}-{month:02d}-{int(rng.integers(1, 29)):02d}",
        "journal": {"name": f"Journal of {field}", "pages": None, "volume": None},
    }


def abstract_record(number: int, rng: np.random.Generator,
                    vocabulary: NDArray[np.str_]) -> dict[str, Any]:
    words = vocabulary[rng.integers(0, len(vocabulary), max(20, int(rng.normal(120, 40))))]
    return {"corpusid": FIRST_CORPUS_ID + number,
            "abstract": " ".join(words).capitalize() + ".",
            "openaccessinfo": {"externalids": None, "license": None, "url": None,
                               "status": None}}


def citation_records(number: int, references: list[int], works: int,
                     rng: np.random.Generator, first_id: int) -> list[dict[str, Any]]:
    records = []
    for offset, cited in enumerate(references):
        contexts = int(rng.integers(1, 3))
        records.append({
            "citationid": first_id + offset, "citingcorpusid": FIRST_CORPUS_ID + number,
            "citedcorpusid": FIRST_CORPUS_ID + cited if cited < works else None,
            "isinfluential": bool(rng.random() < INFLUENTIAL_SHARE),
            "contexts": ["..."] * contexts,
            "intents": [sorted(set(rng.choice(INTENTS, int(rng.integers(1, 3))).tolist()))
                        for _ in range(contexts)]})
    return records


def generate(target: Path, works: int, references: float, inside_share: float,
             seed: int = 7) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    kept, computer_science, years = plan_works(rng, works)
    vocabulary, surnames = make_vocabulary(rng), make_vocabulary(rng, 3000)
    for name in ("papers", "abstracts", "citations"):
        (target / name).mkdir(parents=True, exist_ok=True)
    counts = {"works": works, "kept_works": int(kept.sum()), "citations": 0,
              "citations_inside_kept": 0}
    citation_id = 0
    for shard, start in enumerate(range(0, works, SHARD_WORKS)):
        stop = min(start + SHARD_WORKS, works)
        lists = reference_lists(rng, kept, start, stop, references, inside_share)
        with shard_file(target, "papers", shard) as papers, \
                shard_file(target, "abstracts", shard) as abstracts, \
                shard_file(target, "citations", shard) as citations:
            for number, refs in zip(range(start, stop), lists, strict=True):
                write(papers, paper_record(number, int(years[number]),
                                           bool(computer_science[number]), rng, vocabulary,
                                           surnames))
                write(abstracts, abstract_record(number, rng, vocabulary))
                for record in citation_records(number, refs, works, rng, citation_id):
                    write(citations, record)
                citation_id += len(refs)
                if kept[number]:
                    counts["citations_inside_kept"] += sum(
                        1 for ref in refs if ref < works and kept[ref])
        counts["citations"] = citation_id
    (target / "stats.json").write_text(json.dumps(counts, indent=1) + "\n")
    return counts


def shard_file(target: Path, dataset: str, shard: int) -> IO[str]:
    return gzip.open(target / dataset / f"part-{shard:03d}.gz", "wt", encoding="utf-8",
                     compresslevel=1)


def write(handle: IO[str], record: dict[str, Any]) -> None:
    handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    generator_main(__doc__.split("\n\n")[0], "folder to write papers/, abstracts/ and "
                   "citations/ to (outside the repository)", generate)
