"""The evidence for each candidate of one search, as numbers a learned ranking combines
(search/order/model.py).

The candidates are the walk's top `WALK_POOL` papers, the query's top `TEXT_POOL` hits
of BM25 and of the embeddings, the `VOTED_POOL` papers its text hits cite most and, for a
search from papers, the `LINKED_POOL` papers most linked to the given ones across the
corpus (co-citation + coupling: on cs768's sparse graph these find more of the source's
other references than the walk from the given papers does). For each, the features
below, every one computed from what the search itself has: the walk's list, the two text
lists, the neighbourhood's citation edges and the seeds' restart mass, the corpus's
citation counts and links (without the citations of the excluded papers: a benchmark
query's hidden source paper does not count) and years. Beyond the neighbourhood, each
candidate is compared with the search's anchors (its seeds: the papers it starts from,
found or given) across the whole corpus (`CorpusFacts`): co-citation and coupling with
them, counted, weighted as Adamic-Adar and normalised; how close its stored vector is to
theirs; whether it shares an author with them (people cite their co-authors and
themselves); and how its citations are spread over the years.
Nothing here reads a paper the search excludes or an edge of one.

Each feature belongs to one group; the benchmark's ablations train without one group at a
time (bench/learned_order.py).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from crase.graph import Graph
from crase.paper_identity import normalise_title
from crase.search.expansion import Edge, Neighbourhood
from crase.search.text_ranking import Hit, fuse_hits

WALK_POOL = 200  # the walk's top papers that become candidates
TEXT_POOL = 100  # each text ranking's top hits that become candidates
VOTED_POOL = 100  # papers most cited by the text hits that become candidates
LINKED_POOL = 100  # papers most linked to the given papers that become candidates
LOG_FLOOR = -12.0  # log of a walk score relative to the best, for a paper it never reached
AGE_CLIP = (-10.0, 30.0)  # years before the seeds, clipped
# A citation is recent when the citing paper is at most this many years older than the
# newest seed (or newer).
RECENT_YEARS = 2
# A reference cited more often than this couples no two papers in the corpus-wide links
# (cypher/read_anchor_links.cypher): nearly everyone cites it, and its paths cost most.
MAX_COUPLING_CITERS = 1000

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "walk": ("walk_log_score", "walk_log_rank", "walk_reached"),
    "text": ("bm25_log_rank", "bm25_relative_score", "dense_log_rank", "dense_cosine"),
    "seed_links": ("is_seed", "seed_restart", "cites_seeds", "cited_by_seeds"),
    "cocitation": ("cocited_with_seeds", "coupled_with_seeds"),
    "text_citers": ("cited_by_text_hits", "text_hit_votes"),
    "degree": ("neighbourhood_cited_by", "neighbourhood_cites", "corpus_cited_by"),
    "age": ("years_before_seeds", "newer_than_seeds"),
    "corpus_links": ("linked_log_rank", "linked_score"),
    "anchor_links": ("cocited_corpus", "coupled_corpus", "cocited_adamic_adar",
                     "coupled_adamic_adar", "cocited_cosine", "coupled_cosine"),
    "anchor_text": ("anchor_similarity_max", "anchor_similarity_mean"),
    "authors": ("anchors_sharing_authors", "anchor_author_mass"),
    "citation_age": ("citations_per_year", "recent_citation_share"),
}
FEATURES: tuple[str, ...] = tuple(name for names in FEATURE_GROUPS.values() for name in names)
# The groups read across the whole corpus for the candidates and the anchors
# (read_corpus_facts): a model that uses none of them costs the search one count query.
CORPUS_WIDE_GROUPS = ("anchor_links", "anchor_text", "authors", "citation_age")
CORPUS_WIDE: frozenset[str] = frozenset(
    name for group in CORPUS_WIDE_GROUPS for name in FEATURE_GROUPS[group])


@dataclass(frozen=True)
class SearchEvidence:
    """What one search knows when it orders its candidates."""

    walk: Sequence[tuple[str, float]]  # the walk's ranking, best first, with its scores
    lexical: Sequence[Hit]  # BM25 hits, best first
    dense: Sequence[Hit]  # embedding hits, best first (score: cosine)
    edges: Sequence[Edge]  # every citation edge of the neighbourhood
    restart: Mapping[str, float]  # each seed's restart mass (sums to 1)
    years: Mapping[str, int | None]  # the year of each neighbourhood paper
    # The references of the query's fused text hits (TEXT_POOL of them), hit -> cited ids,
    # and the cited papers' years.
    hit_references: Mapping[str, Sequence[str]] = field(default_factory=dict)
    reference_years: Mapping[str, int | None] = field(default_factory=dict)
    # A search from papers: the papers most linked to the given ones across the corpus
    # (co-citation + coupling, best first, with the count of links); empty otherwise.
    linked: Sequence[tuple[str, float]] = ()


@dataclass(frozen=True)
class Candidates:
    ids: list[str]
    values: NDArray[np.float64]  # one row per candidate, one column per FEATURES name

    def column(self, name: str) -> NDArray[np.float64]:
        return self.values[:, FEATURES.index(name)]

    def without(self, papers: Sequence[str]) -> "Candidates":
        """These candidates less `papers` (their features unchanged)."""
        dropped = set(papers)
        keep = [row for row, paper in enumerate(self.ids) if paper not in dropped]
        if len(keep) == len(self.ids):
            return self
        return Candidates([self.ids[row] for row in keep], self.values[keep])


def gathered(graph: Graph, walk: Sequence[tuple[str, float]], lexical: Sequence[Hit],
             dense: Sequence[Hit], hood: Neighbourhood, restart: Mapping[str, float],
             excluded: list[str], given: Sequence[str] = ()) -> SearchEvidence:
    """The evidence of a search's stages: its walk, text lists and neighbourhood, with
    the restart mass of the seeds the neighbourhood holds, the references of its fused
    text hits and, for a search from `given` papers, the papers most linked to them (read
    here, the excluded papers left out)."""
    hits = fused_hits(lexical, dense)
    rows = graph.read("read_references_of_papers", ids=hits, excluded=excluded) if hits else []
    references = {row["id"]: [cited for cited, _ in row["references"]] for row in rows}
    years = {cited: year for row in rows for cited, year in row["references"]}
    links = graph.read("rank_cocited_and_coupled", ids=list(given), excluded=excluded,
                       limit=LINKED_POOL) if given else []
    years |= {row["id"]: row["year"] for row in links}
    return SearchEvidence(walk, lexical, dense, hood.edges,
                          {s: restart[s] for s in hood.seeds if s in restart}, hood.years,
                          references, years, [(row["id"], float(row["score"])) for row in links])


def fused_hits(lexical: Sequence[Hit], dense: Sequence[Hit]) -> list[str]:
    """The query's own text ranking (BM25 and embeddings fused as the seeds are,
    search/text_ranking.py), TEXT_POOL papers."""
    return [hit.id for hit in fuse_hits(lexical, dense, TEXT_POOL)]


def text_hit_votes(evidence: SearchEvidence) -> tuple[dict[str, float], dict[str, int]]:
    """For each paper the fused text hits cite: the sum of 1 / rank of the hits citing it,
    and how many cite it."""
    votes: dict[str, float] = {}
    counts: dict[str, int] = {}
    for rank, hit in enumerate(fused_hits(evidence.lexical, evidence.dense), start=1):
        for cited in evidence.hit_references.get(hit, ()):
            votes[cited] = votes.get(cited, 0.0) + 1.0 / rank
            counts[cited] = counts.get(cited, 0) + 1
    return votes, counts


def candidate_ids(evidence: SearchEvidence) -> list[str]:
    """The walk's top WALK_POOL, then papers it lacks: BM25's and the embeddings' top
    TEXT_POOL each, and the VOTED_POOL papers the text hits cite most (text_hit_votes)."""
    ids = [paper for paper, _ in evidence.walk[:WALK_POOL]]
    ids += [hit.id for hit in evidence.lexical[:TEXT_POOL]]
    ids += [hit.id for hit in evidence.dense[:TEXT_POOL]]
    votes, _ = text_hit_votes(evidence)
    ids += sorted(votes, key=lambda paper: (-votes[paper], paper))[:VOTED_POOL]
    ids += [paper for paper, _ in evidence.linked[:LINKED_POOL]]
    return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class AnchorLinks:
    """One candidate's links with one anchor across the whole corpus."""

    cocited: int = 0
    cocited_aa: float = 0.0  # Adamic-Adar: each citing paper weighs 1 / ln(1 + its refs)
    coupled: int = 0
    coupled_aa: float = 0.0  # each shared reference weighs 1 / ln(1 + its citations)


@dataclass(frozen=True)
class CorpusFacts:
    """What the corpus says of the candidates and the anchors beyond the search's own
    lists (read_corpus_facts); the citations of excluded papers never count."""

    cited_by: Mapping[str, int] = field(default_factory=dict)
    recent_cited_by: Mapping[str, int] = field(default_factory=dict)
    references: Mapping[str, int] = field(default_factory=dict)
    authors: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # The candidate's similarity to each anchor, in `anchors` order (None: no vector).
    similarities: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    anchors: Sequence[str] = ()
    links: Mapping[tuple[str, str], AnchorLinks] = field(default_factory=dict)


def recent_from(evidence: SearchEvidence) -> int:
    """The first year whose citations count as recent: RECENT_YEARS before the newest
    seed (a search with no dated seed counts none as recent)."""
    dated = [year for seed in evidence.restart if (year := evidence.years.get(seed))]
    return max(dated) - RECENT_YEARS + 1 if dated else 10_000


def read_corpus_facts(graph: Graph, evidence: SearchEvidence, excluded: list[str]
                      ) -> CorpusFacts:
    """The candidates' and the anchors' citation counts, authors and similarities, and
    every candidate's links with each anchor, `excluded` papers' citations left out."""
    anchors = sorted(evidence.restart)
    ids = list(dict.fromkeys([*candidate_ids(evidence), *anchors]))
    rows = graph.read("read_candidate_signals", ids=ids, excluded=excluded,
                      recent_from=recent_from(evidence))
    links = graph.read("read_anchor_links", ids=ids, anchors=anchors, excluded=excluded,
                       max_citers=MAX_COUPLING_CITERS) if anchors else []
    return CorpusFacts(
        cited_by={row["id"]: int(row["cited_by"]) for row in rows},
        recent_cited_by={row["id"]: int(row["recent_cited_by"]) for row in rows},
        references={row["id"]: int(row["references"]) for row in rows},
        authors={row["id"]: list(row["authors"]) for row in rows},
        similarities=similarities(rows, anchors),
        anchors=anchors,
        links={(row["anchor"], row["id"]): AnchorLinks(
            int(row["cocited"]), summed(row["cocited_aa"]), int(row["coupled"]),
            summed(row["coupled_aa"])) for row in links})


def summed(value: float) -> float:
    """A sum of weights the database added up, to 9 decimals: the order it adds them in
    follows its plan, which moves the last bit, and the trainer and the search must read
    the same value for the same graph."""
    return round(float(value), 9)


def similarities(rows: Sequence[Mapping[str, Any]], anchors: Sequence[str]
                 ) -> dict[str, list[float | None]]:
    """Each paper's cosine similarity to each anchor's vector, mapped to [0, 1] (None
    where either has no vector)."""
    vectors = {row["id"]: np.asarray(row["vector"], dtype=np.float64) for row in rows
               if row["vector"] is not None}
    out: dict[str, list[float | None]] = {}
    for row in rows:
        own = vectors.get(row["id"])
        out[row["id"]] = [None if own is None or anchor not in vectors
                          else (1.0 + cosine(own, vectors[anchor])) / 2.0
                          for anchor in anchors]
    return out


def cosine(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms > 0 else 0.0


def features_of(graph: Graph, evidence: SearchEvidence, excluded: list[str],
                features: Sequence[str] = FEATURES) -> Candidates:
    """Every candidate with its features, the corpus's facts read without the citations
    of `excluded` papers: the search and the trainer both compute them here. Where
    `features` (the ordering model's) use no CORPUS_WIDE group, only the citation counts
    are read, and those groups' columns are left at their values for no facts."""
    if CORPUS_WIDE.isdisjoint(features):
        return candidate_features(evidence, CorpusFacts(
            cited_by=read_cited_by(graph, candidate_ids(evidence), excluded)))
    return candidate_features(evidence, read_corpus_facts(graph, evidence, excluded))


def read_cited_by(graph: Graph, ids: list[str], excluded: list[str]) -> dict[str, int]:
    """How often each paper is cited in the corpus, citations of `excluded` papers left out."""
    rows = graph.read("read_cited_by_counts", ids=ids, excluded=excluded)
    return {row["id"]: int(row["cited_by"]) for row in rows}


def candidate_features(evidence: SearchEvidence, facts: CorpusFacts) -> Candidates:
    """The FEATURES of every candidate (candidate_ids order)."""
    ids = candidate_ids(evidence)
    years = dict(evidence.reference_years) | dict(evidence.years)
    for hit in [*evidence.lexical, *evidence.dense]:
        years.setdefault(hit.id, hit.year)
    votes, counts = text_hit_votes(evidence)
    columns = (walk_columns(ids, evidence.walk) | text_columns(ids, evidence)
               | graph_columns(ids, evidence.edges, evidence.restart)
               | {"corpus_cited_by": np.log1p([facts.cited_by.get(p, 0) for p in ids]),
                  "cited_by_text_hits": np.log1p([counts.get(p, 0) for p in ids]),
                  "text_hit_votes": np.log1p([10.0 * votes.get(p, 0.0) for p in ids])}
               | age_columns(ids, years, evidence.restart)
               | linked_columns(ids, evidence.linked)
               | anchor_link_columns(ids, facts, evidence.restart)
               | anchor_text_columns(ids, facts, evidence.restart)
               | author_columns(ids, facts, evidence.restart)
               | citation_age_columns(ids, facts, years, recent_from(evidence)))
    values = np.column_stack([np.asarray(columns[name], dtype=np.float64)
                              for name in FEATURES]) if ids else np.zeros((0, len(FEATURES)))
    return Candidates(ids, values)


def anchor_link_columns(ids: list[str], facts: CorpusFacts, restart: Mapping[str, float]
                        ) -> dict[str, NDArray[np.float64]]:
    """Co-citation and coupling with the anchors over the whole corpus: summed with each
    anchor weighing its restart mass times the number of anchors (as graph_columns),
    Adamic-Adar, and the best cosine-normalised index (links over the geometric mean of
    the two papers' citations, or references)."""
    scale = len(restart)
    sums = {name: dict.fromkeys(ids, 0.0) for name in
            ("cocited", "coupled", "cocited_aa", "coupled_aa", "cocited_cos", "coupled_cos")}
    # In the pairs' own order, not the order the database returned them in: a float sum
    # moves its last bit with the order, and the trainer and the search must compute the
    # same value (and a model be trained to the same bytes) whatever the plan.
    for (anchor, paper), link in sorted(facts.links.items()):
        if paper not in sums["cocited"]:
            continue
        weight = restart.get(anchor, 0.0) * scale
        sums["cocited"][paper] += weight * link.cocited
        sums["coupled"][paper] += weight * link.coupled
        sums["cocited_aa"][paper] += weight * link.cocited_aa
        sums["coupled_aa"][paper] += weight * link.coupled_aa
        cited = math.sqrt(max(facts.cited_by.get(paper, 0), 1)
                          * max(facts.cited_by.get(anchor, 0), 1))
        cites = math.sqrt(max(facts.references.get(paper, 0), 1)
                          * max(facts.references.get(anchor, 0), 1))
        sums["cocited_cos"][paper] = max(sums["cocited_cos"][paper], link.cocited / cited)
        sums["coupled_cos"][paper] = max(sums["coupled_cos"][paper], link.coupled / cites)
    return {
        "cocited_corpus": np.log1p([sums["cocited"][p] for p in ids]),
        "coupled_corpus": np.log1p([sums["coupled"][p] for p in ids]),
        "cocited_adamic_adar": np.log1p([sums["cocited_aa"][p] for p in ids]),
        "coupled_adamic_adar": np.log1p([sums["coupled_aa"][p] for p in ids]),
        "cocited_cosine": np.array([sums["cocited_cos"][p] for p in ids]),
        "coupled_cosine": np.array([sums["coupled_cos"][p] for p in ids]),
    }


def anchor_text_columns(ids: list[str], facts: CorpusFacts, restart: Mapping[str, float]
                        ) -> dict[str, NDArray[np.float64]]:
    """How close a candidate's stored vector is to the anchors': the closest anchor, and
    the mean over anchors weighted by restart mass (0.5, orthogonal, where a vector is
    missing)."""
    weights = np.array([restart.get(anchor, 0.0) for anchor in facts.anchors])
    total = float(weights.sum()) or 1.0
    best, mean = [], []
    for paper in ids:
        found = np.array([0.5 if s is None else float(s)
                          for s in facts.similarities.get(paper, ())] or [0.5])
        if len(found) != len(weights):  # a paper the facts did not read
            found = np.full(len(weights) or 1, 0.5)
        best.append(float(found.max()))
        mean.append(float(found @ weights) / total if len(weights) else 0.5)
    return {"anchor_similarity_max": np.array(best), "anchor_similarity_mean": np.array(mean)}


def author_key(name: str) -> str:
    """A person as first initial and surname ("J.-B. Zuber" and "Jean-Bernard Zuber" are
    "j zuber"): corpora spell first names in full or as initials."""
    words = normalise_title(name).split()
    return f"{words[0][0]} {words[-1]}" if words else ""


def author_columns(ids: list[str], facts: CorpusFacts, restart: Mapping[str, float]
                   ) -> dict[str, NDArray[np.float64]]:
    """How many anchors share an author with a candidate, and their restart mass: people
    cite themselves and their co-authors. An anchor is never counted against itself."""
    anchor_keys = {anchor: {author_key(a) for a in facts.authors.get(anchor, ())} - {""}
                   for anchor in restart}
    sharing, mass = [], []
    for paper in ids:
        keys = {author_key(a) for a in facts.authors.get(paper, ())} - {""}
        shared = [anchor for anchor, own in anchor_keys.items()
                  if anchor != paper and keys & own]
        sharing.append(len(shared))
        mass.append(sum(restart[anchor] for anchor in shared))
    return {"anchors_sharing_authors": np.log1p(sharing), "anchor_author_mass": np.array(mass)}


def citation_age_columns(ids: list[str], facts: CorpusFacts, years: Mapping[str, int | None],
                         recent: int) -> dict[str, NDArray[np.float64]]:
    """Citations per year since publication (to the newest seed's year) and the share of
    a paper's citations that are recent (recent_from): a paper still being cited when the
    query is asked."""
    now = recent + RECENT_YEARS - 1
    per_year, share = [], []
    for paper in ids:
        cited = facts.cited_by.get(paper, 0)
        year = years.get(paper)
        span = max(now - year + 1, 1) if year is not None and now < 10_000 else 1
        per_year.append(math.log1p(cited / span))
        share.append(facts.recent_cited_by.get(paper, 0) / cited if cited else 0.0)
    return {"citations_per_year": np.array(per_year), "recent_citation_share": np.array(share)}


def walk_columns(ids: list[str], walk: Sequence[tuple[str, float]]
                 ) -> dict[str, NDArray[np.float64]]:
    place = {paper: rank for rank, (paper, _) in enumerate(walk, start=1)}
    score = dict(walk)
    top = max((s for _, s in walk), default=0.0)
    unranked = math.log(len(walk) + 1)

    def log_score(paper: str) -> float:
        value = score.get(paper, 0.0)
        return max(math.log(value / top), LOG_FLOOR) if value > 0 and top > 0 else LOG_FLOOR

    return {
        "walk_log_score": np.array([log_score(p) for p in ids]),
        "walk_log_rank": np.array([math.log(place[p]) if p in place else unranked
                                   for p in ids]),
        "walk_reached": np.array([float(p in place) for p in ids]),
    }


def text_columns(ids: list[str], evidence: SearchEvidence) -> dict[str, NDArray[np.float64]]:
    def log_ranks(hits: Sequence[Hit]) -> NDArray[np.float64]:
        place = {hit.id: rank for rank, hit in enumerate(hits, start=1)}
        missing = math.log(len(hits) + 1)
        return np.array([math.log(place[p]) if p in place else missing for p in ids])

    top_bm25 = max((h.score for h in evidence.lexical), default=0.0)
    bm25 = {h.id: h.score / top_bm25 for h in evidence.lexical} if top_bm25 > 0 else {}
    cosine = {h.id: h.score for h in evidence.dense}
    # A paper outside the dense list is no closer than its last hit.
    floor = min(cosine.values(), default=0.0)
    return {
        "bm25_log_rank": log_ranks(evidence.lexical),
        "bm25_relative_score": np.array([bm25.get(p, 0.0) for p in ids]),
        "dense_log_rank": log_ranks(evidence.dense),
        "dense_cosine": np.array([cosine.get(p, floor) for p in ids]),
    }


def linked_columns(ids: list[str], linked: Sequence[tuple[str, float]]
                   ) -> dict[str, NDArray[np.float64]]:
    """A paper's place among those most linked to the given papers, and its links."""
    place = {paper: rank for rank, (paper, _) in enumerate(linked, start=1)}
    links = dict(linked)
    missing = math.log(len(linked) + 1)
    return {
        "linked_log_rank": np.array([math.log(place[p]) if p in place else missing
                                     for p in ids]),
        "linked_score": np.log1p([links.get(p, 0.0) for p in ids]),
    }


def graph_columns(ids: list[str], edges: Sequence[Edge], restart: Mapping[str, float]
                  ) -> dict[str, NDArray[np.float64]]:
    """Links to the seeds, co-citation and coupling with them (each seed weighing its
    restart mass, times the number of seeds: equal masses count plain links), and
    citations inside the neighbourhood."""
    references: dict[str, set[str]] = {}
    citers: dict[str, set[str]] = {}
    for citing, cited in edges:
        references.setdefault(citing, set()).add(cited)
        citers.setdefault(cited, set()).add(citing)
    scale = len(restart)
    cites_seeds, cited_by_seeds, cocited, coupled = (dict.fromkeys(ids, 0.0) for _ in range(4))
    wanted = set(ids)
    for seed, mass in restart.items():
        weight = mass * scale
        for paper in references.get(seed, ()):
            if paper in wanted:
                cited_by_seeds[paper] += weight
        for paper in citers.get(seed, ()):
            if paper in wanted:
                cites_seeds[paper] += weight
        for citing in citers.get(seed, ()):  # co-cited: both cited by one paper
            for paper in references.get(citing, ()):
                if paper in wanted and paper != seed:
                    cocited[paper] += weight
        for cited in references.get(seed, ()):  # coupled: both cite one paper
            for paper in citers.get(cited, ()):
                if paper in wanted and paper != seed:
                    coupled[paper] += weight
    return {
        "is_seed": np.array([float(p in restart) for p in ids]),
        "seed_restart": np.array([math.sqrt(restart.get(p, 0.0)) for p in ids]),
        "cites_seeds": np.log1p([cites_seeds[p] for p in ids]),
        "cited_by_seeds": np.log1p([cited_by_seeds[p] for p in ids]),
        "cocited_with_seeds": np.log1p([cocited[p] for p in ids]),
        "coupled_with_seeds": np.log1p([coupled[p] for p in ids]),
        "neighbourhood_cited_by": np.log1p([len(citers.get(p, ())) for p in ids]),
        "neighbourhood_cites": np.log1p([len(references.get(p, ())) for p in ids]),
    }


def age_columns(ids: list[str], years: Mapping[str, int | None], restart: Mapping[str, float]
                ) -> dict[str, NDArray[np.float64]]:
    """Years before the seeds' year (their restart-weighted mean): the query's own year is
    not known to a search, the year of its best text hits is. A paper without a year sits
    at the seeds' year."""
    dated = [(years[s], mass) for s, mass in restart.items() if years.get(s) is not None]
    total = sum(mass for _, mass in dated)
    if not dated or total <= 0:
        return {"years_before_seeds": np.zeros(len(ids)), "newer_than_seeds": np.zeros(len(ids))}
    centre = sum(float(year or 0) * mass for year, mass in dated) / total
    newest = max(year or 0 for year, _ in dated)
    before = [centre - year if (year := years.get(p)) is not None else 0.0 for p in ids]
    return {
        "years_before_seeds": np.clip(before, *AGE_CLIP),
        "newer_than_seeds": np.array([float((years.get(p) or 0) > newest) for p in ids]),
    }
