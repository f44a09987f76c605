"""Cut a small connected sample out of a corpus in the normalized format.

    python -m crase.bench.sample ../shared/data/hepth data/sample --papers 3000

Starts from the source papers of the first queries, walks the citation graph breadth-first
(both directions, best-connected neighbours first) until the sample is full, keeps every
edge among the chosen papers, and keeps the queries whose source paper and most of whose
relevant papers made it in. Deterministic for the same input.
"""

import argparse
import csv
import json
from collections import defaultdict, deque
from pathlib import Path


def read_edges(path: Path) -> list[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [(row["citing_id"], row["cited_id"]) for row in csv.DictReader(handle)]


def choose_papers(edges: list[tuple[str, str]], starts: list[str], size: int) -> set[str]:
    neighbours: dict[str, set[str]] = defaultdict(set)
    for citing, cited in edges:
        neighbours[citing].add(cited)
        neighbours[cited].add(citing)
    chosen: set[str] = set()
    queue = deque(starts)
    while queue and len(chosen) < size:
        paper = queue.popleft()
        if paper in chosen:
            continue
        chosen.add(paper)
        ranked = sorted(neighbours[paper] - chosen, key=lambda p: (-len(neighbours[p]), p))
        queue.extend(ranked[:12])
    return chosen


def write_sample(source: Path, target: Path, size: int, query_count: int) -> None:
    edges = read_edges(source / "citations.csv")
    queries = [json.loads(line) for line in (source / "queries.jsonl").open(encoding="utf-8")]
    starts = [q["source_paper_id"] for q in queries[:query_count]]
    chosen = choose_papers(edges, starts, size)
    target.mkdir(parents=True, exist_ok=True)
    with (source / "papers.jsonl").open(encoding="utf-8") as src, \
            (target / "papers.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(line for line in src if json.loads(line)["id"] in chosen)
    with (target / "citations.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["citing_id", "cited_id"])
        writer.writerows((a, b) for a, b in edges if a in chosen and b in chosen)
    kept = [q for q in queries if q["source_paper_id"] in chosen
            and sum(r in chosen for r in q["relevant_ids"]) >= 0.6 * len(q["relevant_ids"])]
    with (target / "queries.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(q) + "\n" for q in kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="folder with papers.jsonl, citations.csv, "
                        "queries.jsonl")
    parser.add_argument("target", type=Path, help="folder to write the sample to")
    parser.add_argument("--papers", type=int, default=3000, help="sample size (default 3000)")
    parser.add_argument("--queries", type=int, default=40, help="queries to start from")
    args = parser.parse_args()
    write_sample(args.source, args.target, args.papers, args.queries)


if __name__ == "__main__":
    main()
