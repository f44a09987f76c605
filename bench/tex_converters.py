"""Crase's TeX converter against pylatexenc on a corpus's titles and abstracts: speed, and
how often and how their Unicode readings differ.

    python -m crase.bench.tex_converters                       # ../shared/data/hepth
    python -m crase.bench.tex_converters --corpus DIR --examples 10

pylatexenc comes with bibtexparser (a dependency). Both readings are compared with their
whitespace collapsed; the examples are drawn with a fixed seed and shown around the first
character where the two differ.
"""

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

from crase.scoring.tex import plain_text, tex_to_unicode

DEFAULT_CORPUS = Path("../shared/data/hepth")


def corpus_texts(folder: Path) -> list[str]:
    texts = []
    with (folder / "papers.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            texts += [text for text in (row.get("title"), row.get("abstract")) if text]
    return texts


def timed(convert: Callable[[str], str], texts: list[str]) -> tuple[list[str], float]:
    started = time.perf_counter()
    out = [" ".join(convert(text).split()) for text in texts]
    return out, time.perf_counter() - started


def around_first_difference(ours: str, theirs: str, width: int = 60) -> tuple[str, str]:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
              min(len(ours), len(theirs)))
    start = max(0, at - width // 2)
    return ours[start:start + width], theirs[start:start + width]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="a folder holding papers.jsonl (default %(default)s)")
    parser.add_argument("--examples", type=int, default=6, help="differences to show")
    args = parser.parse_args(argv)
    from pylatexenc.latex2text import LatexNodes2Text  # type: ignore[import-untyped]

    texts = corpus_texts(args.corpus)
    print(f"{len(texts):,} titles and abstracts, {sum(map(len, texts)) / 1e6:.1f} M characters")
    ours, ours_s = timed(tex_to_unicode, texts)
    _, plain_s = timed(plain_text, texts)
    theirs, theirs_s = timed(LatexNodes2Text(math_mode="text").latex_to_text, texts)
    print("converter                 seconds   texts/s")
    for name, seconds in (("crase tex_to_unicode", ours_s), ("crase plain_text", plain_s),
                          ("pylatexenc", theirs_s)):
        print(f"{name:<24} {seconds:>8.2f} {len(texts) / seconds:>9,.0f}")
    differ = [i for i in range(len(texts)) if ours[i] != theirs[i]]
    print(f"readings that differ: {len(differ):,} of {len(texts):,}")
    for i in random.Random(1).sample(differ, min(args.examples, len(differ))):
        mine, other = around_first_difference(ours[i], theirs[i])
        print(f"  crase      {mine!r}\n  pylatexenc {other!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
