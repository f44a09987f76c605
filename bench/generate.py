"""Generate a synthetic corpus in the normalized format, for load benchmarks at scale.

    python -m crase.bench.generate /tmp/crase-gen --papers 500000 --edges 10000000

What makes it realistic enough for a load benchmark:
- years 1990-2024 with ~5 % more papers every year; ids in publication order;
- out-degree (reference-list length) log-normal, median ~14 with a long tail, and about
  one paper in seven citing nothing in the corpus (hepth: 15 %);
- in-degree heavy-tailed: each paper has a Pareto "fitness", and a paper cites earlier
  papers with probability proportional to fitness times an exponential ageing factor
  (half of the attention within ~5 years), which gives the few-papers-get-most-citations
  shape of real citation graphs;
- titles, abstracts (~120 words) and author lists of realistic length from a pseudo-word
  vocabulary, so the full-text index does real work.
Deterministic for a given seed. The files are large (500K/10M: ~0.6 GB + ~0.2 GB): write
them under /tmp or var/, never into the repository.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

FIRST_YEAR, LAST_YEAR = 1990, 2024
GROWTH = 0.05  # yearly growth of the number of papers
AGEING_YEARS = 7.0  # e-folding time of the attention an older paper gets
FITNESS_SHAPE = 1.6  # Pareto shape: lower means a heavier in-degree tail
NO_REFERENCES_SHARE = 0.14
OUT_DEGREE_SIGMA = 0.9
CHUNK = 20_000
SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "ven", "dor", "qua", "phi", "ton",
             "gra", "sel", "mu", "xi", "bra", "ne", "on", "ic", "al", "um", "en", "ar"]
CATEGORIES = ["hep-th", "hep-ph", "gr-qc", "astro-ph.CO", "cond-mat.str-el", "quant-ph",
              "math-ph", "cs.LG", "cs.CL", "cs.IR", "stat.ML", "nucl-th", "hep-lat",
              "cond-mat.stat-mech", "math.AG", "cs.DS", "physics.comp-ph", "q-bio.NC"]


def make_vocabulary(rng: np.random.Generator, size: int = 6000) -> NDArray[np.str_]:
    words: set[str] = set()
    while len(words) < size:
        parts = rng.choice(SYLLABLES, size=rng.integers(2, 5))
        words.add("".join(parts))
    return np.array(sorted(words))


def paper_years(rng: np.random.Generator, papers: int) -> NDArray[np.int64]:
    years = np.arange(FIRST_YEAR, LAST_YEAR + 1)
    weights = np.exp(GROWTH * (years - FIRST_YEAR))
    return np.sort(rng.choice(years, size=papers, p=weights / weights.sum()))


def out_degrees(rng: np.random.Generator, papers: int, edges: int) -> NDArray[np.int64]:
    raw = rng.lognormal(mean=0.0, sigma=OUT_DEGREE_SIGMA, size=papers)
    raw[rng.random(papers) < NO_REFERENCES_SHARE] = 0.0
    scaled = raw * edges / raw.sum()
    return np.floor(scaled + rng.random(papers)).astype(np.int64)


def citation_edges(rng: np.random.Generator, years: NDArray[np.int64],
                   degrees: NDArray[np.int64]) -> NDArray[np.int64]:
    """(citing, cited) index pairs, citing only papers of earlier years, no repeats."""
    fitness = rng.pareto(FITNESS_SHAPE, size=len(years)) + 0.05
    pairs = []
    for year in np.unique(years):
        first, last = np.searchsorted(years, [year, year + 1])
        wanted = int(degrees[first:last].sum())
        if first == 0 or wanted == 0:
            continue
        weights = fitness[:first] * np.exp(-(year - years[:first]) / AGEING_YEARS)
        cumulative = np.cumsum(weights)
        cited = np.searchsorted(cumulative, rng.random(wanted) * cumulative[-1])
        citing = np.repeat(np.arange(first, last), degrees[first:last])
        keys = np.unique(citing * len(years) + cited)  # drops repeated picks
        pairs.append(keys)
    keys = np.concatenate(pairs)
    return np.stack([keys // len(years), keys % len(years)], axis=1)


def choose_edges(rng: np.random.Generator, years: NDArray[np.int64],
                 edges: int) -> NDArray[np.int64]:
    """Exactly `edges` pairs: oversample (repeated picks are dropped), then thin."""
    factor = 1.05
    while True:
        pairs = citation_edges(rng, years, out_degrees(rng, len(years), int(edges * factor)))
        if len(pairs) >= edges:
            keep = np.sort(rng.choice(len(pairs), size=edges, replace=False))
            return pairs[keep]
        factor *= 1.1 * edges / len(pairs)


def write_papers(path: Path, rng: np.random.Generator, years: NDArray[np.int64],
                 vocabulary: NDArray[np.str_]) -> None:
    surnames = make_vocabulary(rng, 3000)
    with path.open("w", encoding="utf-8") as out:
        for start in range(0, len(years), CHUNK):
            out.writelines(paper_line(i, int(years[i]), rng, vocabulary, surnames) + "\n"
                           for i in range(start, min(start + CHUNK, len(years))))


def paper_line(index: int, year: int, rng: np.random.Generator,
               vocabulary: NDArray[np.str_], surnames: NDArray[np.str_]) -> str:
    month, day = int(rng.integers(1, 13)), int(rng.integers(1, 29))
    title_words = vocabulary[rng.integers(0, len(vocabulary), size=rng.integers(5, 15))]
    abstract_words = vocabulary[rng.integers(0, len(vocabulary),
                                             size=max(20, int(rng.normal(120, 40))))]
    authors = [f"{chr(65 + int(rng.integers(0, 26)))}. {name.capitalize()}"
               for name in surnames[rng.integers(0, len(surnames),
                                                 size=1 + rng.poisson(2.5))]]
    record = {
        "id": f"gen{index:07d}",
        "title": " ".join(title_words).capitalize(),
        "abstract": " ".join(abstract_words).capitalize() + ".",
        "year": year,
        "date": f"{year}-{month:02d}-{day:02d}",
        "authors": authors,
        "arxiv_id": f"{year % 100:02d}{month:02d}.{index % 100000:05d}",
        "categories": sorted(set(rng.choice(CATEGORIES, size=rng.integers(1, 4)).tolist())),
    }
    return json.dumps(record, ensure_ascii=False)


def write_citations(path: Path, pairs: NDArray[np.int64]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write("citing_id,cited_id\n")
        for start in range(0, len(pairs), 1_000_000):
            chunk = pairs[start:start + 1_000_000].tolist()
            out.write("".join(f"gen{a:07d},gen{b:07d}\n" for a, b in chunk))


def describe(pairs: NDArray[np.int64], papers: int) -> dict[str, float]:
    out = np.bincount(pairs[:, 0], minlength=papers)
    into = np.bincount(pairs[:, 1], minlength=papers)
    return {
        "papers": papers, "edges": len(pairs),
        "mean_out_degree": round(float(out.mean()), 2),
        "median_out_degree_citing": float(np.median(out[out > 0])),
        "max_out_degree": int(out.max()),
        "share_citing_nothing": round(float((out == 0).mean()), 3),
        "max_in_degree": int(into.max()),
        "share_never_cited": round(float((into == 0).mean()), 3),
        "top_1pct_share_of_citations": round(
            float(np.sort(into)[-max(1, papers // 100):].sum() / max(1, len(pairs))), 3),
    }


def generate(target: Path, papers: int, edges: int, seed: int = 7) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    target.mkdir(parents=True, exist_ok=True)
    years = paper_years(rng, papers)
    pairs = choose_edges(rng, years, edges)
    write_citations(target / "citations.csv", pairs)
    write_papers(target / "papers.jsonl", rng, years, make_vocabulary(rng))
    stats = describe(pairs, papers)
    (target / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="folder to write papers.jsonl and "
                        "citations.csv to (outside the repository)")
    parser.add_argument("--papers", type=int, default=500_000, help="default 500000")
    parser.add_argument("--edges", type=int, default=10_000_000, help="default 10000000")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    args = parser.parse_args()
    started = time.monotonic()
    stats = generate(args.target, args.papers, args.edges, args.seed)
    print(json.dumps(stats, indent=1))
    print(f"written to {args.target} in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
