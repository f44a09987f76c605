"""Claim-level Delta on a local model, against the offline scorer, on real citation edges.

    python -m crase.bench.model_entailment [corpus] [--citing 4] [--cited 3] [--seed 7]
        [--model qwen2.5-coder-1.5b] [--out var/bench/model-entailment.json]

Samples `--citing` papers of the corpus (default: the repository's hep-th sample) that cite
at least `--cited` papers with an abstract, and those cited papers, seeded; or, with `--key`,
takes the edges of a `crase validate export` sample (its key.json: the sample annotators
judge, half retained and half pruned by the run's scorer). Then, with the
packaged model on the local llama.cpp server (started unless one runs; every call through
the project's own client, nothing cached between passes; `--reuse` keeps the replies of
the last run, to measure a prompt change on the requests it changes):

1. claims of every paper by the model (`extract_claims`): seconds per paper, validity, and
   how many claims quote the sentence of the paper that shares most words with them (a
   check that each claim rests on its own source phrase, not on the first one offered);
2. the entailment matrix of every edge twice (once, grouped, with `--grouped-only`), in
   two orders over the same prompts: edges
   interleaved across citing papers, then grouped by citing paper. Grouped, consecutive
   prompts share the instructions and the citing claims (score_entailment@2 puts them
   first), which llama.cpp's server reuses from its previous prompt: the difference in
   seconds per edge is what prefix caching saves;
3. Delta and the keep/prune verdict (Delta > tau) per edge by the model and by the offline
   scorer (sentence claims, MiniLM cosine), their agreement (share and Cohen's kappa), and
   the edges where they disagree, with both claim sets.

Prints the figures with the load average; writes the details as JSON.
"""

import argparse
import json
import random
import re
import shutil
import time
from pathlib import Path
from typing import Any, get_args

from crase.bench.citation_pairs import Corpus, default_corpus, read_corpus
from crase.bench.machine_state import load_average
from crase.models.chat import ModelRunner
from crase.models.local_server import LocalModelServer, local_endpoint
from crase.models.reply_cache import ReplyCache
from crase.prompts.replies import normalise_text
from crase.scoring.claims import Claim
from crase.scoring.delta import coverage_affinity, judge_delta
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.model import (
    ModelClaimExtractor,
    ModelEntailmentScorer,
    source_spans,
)
from crase.search.roles.offline_claims import OfflineClaimExtractor
from crase.settings import LocalModelName, Settings
from crase.usage import ModelLedger

Edge = tuple[str, str]


def sample_edges(corpus: Corpus, citing: int, cited: int, seed: int) -> list[Edge]:
    """`cited` edges out of each of `citing` papers, all with an abstract on both ends."""
    has_text = {pid for pid, paper in corpus.papers.items() if paper.abstract.strip()}
    out: dict[str, list[str]] = {}
    for u, v in corpus.edges:
        if u in has_text and v in has_text:
            out.setdefault(u, []).append(v)
    rng = random.Random(seed)
    chosen = rng.sample(sorted(u for u, vs in out.items() if len(vs) >= cited), citing)
    return [(u, v) for u in chosen for v in sorted(rng.sample(out[u], cited))]


def key_edges(path: Path) -> list[Edge]:
    """The edges of a validation export's key.json, in its item order."""
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    return [(item["citing"], item["cited"]) for item in items.values()]


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", normalise_text(text)))


def quoted(phrase: str) -> str:
    return normalise_text(phrase).strip("\"'.… ")


def anchored(claims: dict[str, list[Claim]], corpus: Corpus) -> tuple[int, int]:
    """(claims whose source phrase is the paper sentence sharing most words with the claim,
    claims): a claim pinned to another sentence of the paper rests on the wrong phrase."""
    hits = total = 0
    for pid, paper_claims in claims.items():
        paper = corpus.papers[pid]
        spans = source_spans([paper.title, paper.abstract])
        for claim in paper_claims:
            said = words(claim.text)
            best = max(spans, key=lambda span: len(said & words(span)) / len(said | words(span)))
            hits += quoted(best) == quoted(claim.source_phrase)
            total += 1
    return hits, total


def interleaved(edges: list[Edge]) -> list[Edge]:
    """The same edges, no two consecutive ones out of the same paper where avoidable."""
    groups: dict[str, list[Edge]] = {}
    for edge in edges:
        groups.setdefault(edge[0], []).append(edge)
    columns = list(groups.values())
    return [col[i] for i in range(max(map(len, columns))) for col in columns if i < len(col)]


def timed_scores(scorer: ModelEntailmentScorer, claims: dict[str, list[Claim]],
                 edges: list[Edge]) -> tuple[dict[Edge, Any], list[float]]:
    """One call per edge (so each is timed), in the given order."""
    matrices: dict[Edge, Any] = {}
    seconds = []
    for edge in edges:
        started = time.perf_counter()
        [matrix] = scorer.score([(claims[edge[0]], claims[edge[1]])], [f"{edge[0]}->{edge[1]}"])
        seconds.append(time.perf_counter() - started)
        matrices[edge] = matrix
    return matrices, seconds


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    """Cohen's kappa of two raters' yes/no verdicts; None when chance agreement is 1."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def fresh_runner(folder: Path) -> ModelRunner:
    return ModelRunner(ModelLedger(), ReplyCache(folder))


def deltas(matrices: dict[Edge, Any], theta: float) -> dict[Edge, float | None]:
    return {edge: None if m is None else coverage_affinity(m, theta)
            for edge, m in matrices.items()}


def measure(settings: Settings, corpus: Corpus, edges: list[Edge], scratch: Path,
            orders: tuple[str, ...] = ("interleaved", "grouped")) -> dict[str, Any]:
    endpoint = local_endpoint(settings.local_model)
    papers = [corpus.papers[p] for p in sorted({p for e in edges for p in e})]
    runner = fresh_runner(scratch / "claims")
    started = time.perf_counter()
    claims = ModelClaimExtractor(endpoint, runner).extract(papers)
    claims_s = time.perf_counter() - started
    scorable = [e for e in edges if claims.get(e[0]) and claims.get(e[1])]
    passes: dict[str, Any] = {}
    arranged = {"interleaved": interleaved(scorable),
                "grouped": sorted(scorable, key=lambda edge: edge[0])}  # by citing paper
    for order, ordered in ((order, arranged[order]) for order in orders):
        scorer = ModelEntailmentScorer(endpoint, fresh_runner(scratch / order))
        matrices, seconds = timed_scores(scorer, claims, ordered)
        passes[order] = {"matrices": matrices, "seconds": seconds,
                         "tokens": scorer.runner.ledger.stage("entailment").prompt_tokens,
                         "completion": scorer.runner.ledger.stage(
                             "entailment").completion_tokens,
                         "failed": scorer.runner.ledger.stage("entailment").failed}
    offline_claims = OfflineClaimExtractor().extract(papers)
    offline = CosineEntailmentScorer()
    both = [e for e in edges if offline_claims.get(e[0]) and offline_claims.get(e[1])]
    offline_matrices = dict(zip(both, offline.score(
        [(offline_claims[u], offline_claims[v]) for u, v in both]), strict=True))
    return {"papers": len(papers), "claims": claims, "claims_s": claims_s,
            "anchored": anchored(claims, corpus),
            "claims_failed": runner.ledger.stage("claims").failed,
            "claims_failures": runner.ledger.to_dict()["failures"],
            "claims_usage": runner.ledger.stage("claims"), "scorable": scorable,
            "passes": passes, "offline_claims": offline_claims,
            "offline_matrices": offline_matrices, "offline_name": offline.name}


def claim_lines(claims: list[Claim] | None) -> list[str]:
    return [f"[{c.type[:4]}] {c.text}" for c in claims or []]


def report(settings: Settings, edges: list[Edge], data: dict[str, Any]) -> dict[str, Any]:
    theta, tau = settings.search.theta, settings.search.tau
    model_delta = deltas(data["passes"]["grouped"]["matrices"], theta)
    offline_delta = deltas(data["offline_matrices"], theta)
    compared = [e for e in edges if model_delta.get(e) is not None
                and offline_delta.get(e) is not None]
    model_keep = [judge_delta(model_delta[e], tau).kept for e in compared]
    offline_keep = [judge_delta(offline_delta[e], tau).kept for e in compared]
    agree = sum(a == b for a, b in zip(model_keep, offline_keep, strict=True))
    print(f"\nclaims: {data['papers']} papers in {data['claims_s']:.1f} s "
          f"({data['claims_s'] / data['papers']:.1f} s per paper), "
          f"{data['claims_failed']} invalid after repair; load {load_average()}")
    hits, total = data["anchored"]
    print(f"claims quoting the sentence that shares most words with them: {hits}/{total}")
    for order in data["passes"]:
        p = data["passes"][order]
        total = sum(p["seconds"])
        print(f"entailment, {order:<11}: {len(p['seconds'])} edges in {total:.1f} s "
              f"({total / max(1, len(p['seconds'])):.2f} s per edge, "
              f"{len(p['seconds']) / max(total, 1e-9):.3f} edges/s), prompt tokens "
              f"{p['tokens']}, completion tokens {p['completion']}, failed {p['failed']}")
    print(f"Delta (theta {theta:g}) and keep (Delta > tau {tau:g}), model against "
          f"{data['offline_name']}, on {len(compared)} edges:")
    print(f"{'edge':<20} {'model':>6} {'offline':>7}  keep m/o")
    for edge, mk, ok in zip(compared, model_keep, offline_keep, strict=True):
        print(f"{edge[0] + '->' + edge[1]:<20} {model_delta[edge]:>6.2f} "
              f"{offline_delta[edge]:>7.2f}  {'yes' if mk else 'no'}/{'yes' if ok else 'no'}")
    kappa = cohen_kappa(model_keep, offline_keep) if compared else None
    print(f"agreement: {agree}/{len(compared)} verdicts; Cohen's kappa "
          f"{'undefined' if kappa is None else f'{kappa:.2f}'}")
    disagreements: list[dict[str, Any]] = []
    for edge, mk, ok in zip(compared, model_keep, offline_keep, strict=True):
        if mk != ok and len(disagreements) < 5:
            disagreements.append({
                "edge": edge, "model_delta": model_delta[edge],
                "offline_delta": offline_delta[edge],
                "model_claims": {p: claim_lines(data["claims"].get(p)) for p in edge},
                "offline_claims": {p: claim_lines(data["offline_claims"].get(p)) for p in edge},
            })
    return {"theta": theta, "tau": tau, "compared": len(compared), "agree": agree,
            "kappa": kappa, "model_delta": {f"{u}->{v}": d for (u, v), d in model_delta.items()},
            "offline_delta": {f"{u}->{v}": d for (u, v), d in offline_delta.items()},
            "disagreements": disagreements,
            "seconds": {o: data["passes"][o]["seconds"] for o in data["passes"]},
            "claims_s": data["claims_s"], "papers": data["papers"],
            "claims_failed": data["claims_failed"], "anchored": data["anchored"],
            "claims_failures": data["claims_failures"],
            "model_claims": {p: claim_lines(c) for p, c in data["claims"].items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, nargs="?", default=default_corpus(),
                        help="folder with papers.jsonl and citations.csv (default: "
                        "CRASE_SAMPLE_CORPUS, else data/sample)")
    parser.add_argument("--citing", type=int, default=4, help="citing papers to sample")
    parser.add_argument("--cited", type=int, default=3, help="cited papers per citing paper")
    parser.add_argument("--seed", type=int, default=7, help="sampling seed")
    parser.add_argument("--key", type=Path, default=None,
                        help="a validation export's key.json: score its edges instead of a "
                        "sample (the corpus must hold their papers)")
    parser.add_argument("--model", choices=get_args(LocalModelName), default=None,
                        help="the packaged model (default: the settings')")
    parser.add_argument("--grouped-only", action="store_true",
                        help="score the edges once, grouped by citing paper (no prefix-cache "
                        "comparison; half the entailment calls)")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the replies stored by the last run: only requests that "
                        "changed, or failed, reach the model (seconds then count only those)")
    parser.add_argument("--out", type=Path, default=None, help="the JSON details")
    args = parser.parse_args(argv)
    settings = Settings()
    if args.model:
        settings.local_model = settings.local_model.model_copy(update={"model": args.model})
    corpus = read_corpus(args.corpus)
    edges = key_edges(args.key) if args.key else sample_edges(corpus, args.citing,
                                                              args.cited, args.seed)
    server = LocalModelServer(settings)
    started_here = not server.status().running
    state = server.start()
    print(f"model {state.model} at {state.base_url}; {len(edges)} edges of {args.corpus}")
    scratch = settings.var_dir / "bench" / f"model-entailment-{settings.local_model.model}"
    if not args.reuse:
        shutil.rmtree(scratch, ignore_errors=True)  # every pass asks the model: nothing cached
    try:
        orders = ("grouped",) if args.grouped_only else ("interleaved", "grouped")
        details = report(settings, edges, measure(settings, corpus, edges, scratch, orders))
    finally:
        if started_here:
            server.stop()
    out = args.out or scratch.with_suffix(".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"model": state.model, **details}, indent=1, default=str))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
