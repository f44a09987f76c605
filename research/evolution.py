"""Evolution map of a topic or a seed paper: its papers and their citation neighbours as a
directed graph grouped by year, with key papers, paths between chosen papers, a Mermaid
export, and a comparison with a reference list (a Connected Papers export, for example).

How it is built:
- seeds: the topic's own text ranking (BM25 and embeddings fused, search/text_ranking.py),
  `limit` papers; or one seed paper given by id;
- neighbours: the seeds' references and citing papers and every citation among all of
  them (the 1.5-hop expansion of search/expansion.py); when that is more than
  `max_papers`, the neighbours with the most links to the seeds are kept;
- edges keep their citation direction (citing -> cited); years are a separate grouping,
  oldest first. The two are not the same order: a paper may cite one of the same year, or
  a later one (a preprint revised after publication).
- key papers, by one stated rule (KEY_RULE): the most cited within the map.

Every edge is a citation found in the corpus. It is descriptive evidence that one paper
refers to another, not proof that one influenced the other; the output says so (NOTE).
No model is asked: the map is built from the citation graph by rules.
"""

import re
import uuid
from collections import deque

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crase.errors import InvalidRequest, PaperNotFound
from crase.graph import Graph
from crase.reference_lists import ReferenceItem
from crase.research.literature_runs import TEXT_RANKING, record_report
from crase.run_lifecycle import SILENT, RunLifecycle, RunObserver, to_json
from crase.search.expansion import expand
from crase.search.reference_resolution import ResolvedReference, resolve_references
from crase.search.text_ranking import Encoder, has_searchable_word, query_hits

STAGES = ("seeds", "expand", "analyse", "compare", "record")
NOTE = ("Each edge is a citation found in the corpus: descriptive evidence that one paper "
        "refers to another, not proof of influence. Arrows point from the citing paper to "
        "the cited one; year groups are a separate, chronological order (oldest first).")
KEY_RULE = ("key paper: cited by at least {min} other papers of this map; the top {top} by "
            "citations within the map, ties broken by all links within the map, then the "
            "earlier year, then the id")
TITLE_CHARS = 60  # Mermaid labels are cut here to keep the diagram readable


class PaperPair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=1000, description="Paper id")
    target: str = Field(min_length=1, max_length=1000, description="Paper id")


class EvolutionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    topic: str | None = Field(None, min_length=1, max_length=2000,
                              description="Words of the topic; or give seed_paper")
    seed_paper: str | None = Field(None, min_length=1, max_length=1000,
                                   description="Paper id to start from instead of a topic")
    limit: int = Field(15, ge=1, le=200, description="Seed papers found for the topic")
    max_papers: int = Field(150, ge=1, le=2000,
                            description="Most papers in the map (seeds always stay)")
    key_papers: int = Field(10, ge=1, le=100, description="How many key papers at most")
    min_citations: int = Field(2, ge=1, le=1000,
                               description="Citations within the map a key paper needs")
    paths: list[PaperPair] = Field(default_factory=list, max_length=50,
                                   description="Pairs of papers to connect")
    reference_list: list[ReferenceItem] | None = Field(
        None, max_length=1000, description="A reference paper set to compare the map with")

    @model_validator(mode="after")
    def one_start(self) -> "EvolutionRequest":
        if (self.topic is None) == (self.seed_paper is None):
            raise ValueError("give either topic or seed_paper, not both and not neither")
        return self


class MapPaper(BaseModel):
    id: str
    title: str
    year: int | None
    authors: list[str]
    seed: bool
    citations_in_map: int = Field(description="Papers of the map that cite it")
    references_in_map: int = Field(description="Papers of the map it cites")
    summary: str = Field(description="The first sentence of its abstract")


class MapEdge(BaseModel):
    citing: str
    cited: str
    citing_year: int | None
    cited_year: int | None


class YearGroup(BaseModel):
    year: int | None
    paper_ids: list[str]


class KeyPaper(BaseModel):
    id: str
    title: str
    year: int | None
    citations_in_map: int
    links_in_map: int
    summary: str = Field(description="The first sentence of its abstract")


class PathStep(BaseModel):
    citing: str
    cited: str
    direction: str = Field(description="'cites' when the step's first paper cites the next, "
                                       "'cited by' when the next cites it")


class PathAnalysis(BaseModel):
    source: str
    target: str
    kind: str = Field(description="'source cites target' (a citation chain from source "
                                  "back to target), 'target cites source', 'mixed' (linked "
                                  "only with edges in both directions), or 'none'")
    papers: list[str]
    steps: list[PathStep]
    years: list[int | None]
    notes: list[str]


class ReferenceComparison(BaseModel):
    reference_count: int
    map_count: int
    in_map: list[ResolvedReference] = Field(description="Reference papers the map holds")
    in_corpus_not_in_map: list[ResolvedReference]
    not_in_corpus: list[ResolvedReference]
    coverage: float = Field(description="Share of the reference list found in the map")
    map_share: float = Field(description="Share of the map that is in the reference list")
    jaccard: float


class EvolutionMap(BaseModel):
    run_id: str
    topic: str | None
    seed_paper: str | None
    note: str
    key_rule: str
    papers: list[MapPaper]
    edges: list[MapEdge]
    years: list[YearGroup]
    key_papers: list[KeyPaper]
    paths: list[PathAnalysis]
    comparison: ReferenceComparison | None
    mermaid: str
    counts: dict[str, int]
    backends: dict[str, str]
    timings: dict[str, float]


def map_evolution(graph: Graph, encoder: Encoder | None, request: EvolutionRequest,
                  run_id: str | None = None, observer: RunObserver = SILENT) -> EvolutionMap:
    """Build the map and record it as a Run of kind 'evolution'."""
    run_id = run_id or uuid.uuid4().hex[:12]
    backends = {"map": "rules-v1", "seeds": TEXT_RANKING if encoder else "bm25"}
    query = request.topic or f"seed paper {request.seed_paper}"
    with RunLifecycle.open(graph, run_id, "evolution", query, request.model_dump(mode="json"),
                           backends, STAGES, observer) as run:
        with run.stage("seeds"):
            seeds = find_map_seeds(graph, encoder, request)
        with run.stage("expand"):
            nodes, edges = bounded_neighbourhood(graph, seeds, request.max_papers)
            papers = read_map_papers(graph, nodes, seeds, edges)
        with run.stage("analyse"):
            keys = key_papers(papers, edges, request.key_papers, request.min_citations)
            paths = [analyse_path(pair.source, pair.target, papers, edges)
                     for pair in request.paths]
        with run.stage("compare"):
            comparison = (compare_with_references(graph, request.reference_list, papers)
                          if request.reference_list is not None else None)
        result = EvolutionMap(
            run_id=run_id, topic=request.topic, seed_paper=request.seed_paper, note=NOTE,
            key_rule=KEY_RULE.format(min=request.min_citations, top=request.key_papers),
            papers=list(papers.values()), edges=edges, years=group_by_year(papers),
            key_papers=keys, paths=paths, comparison=comparison,
            mermaid=to_mermaid(papers, edges, {k.id for k in keys}),
            counts={"seeds": len(seeds), "papers": len(papers), "edges": len(edges),
                    "key_papers": len(keys), "paths_found": sum(p.kind != "none" for p in paths)},
            backends=backends, timings=run.timings)
        with run.stage("record"):
            record_report(run, result, [{"paper_id": k.id, "rank": i, "score":
                                         float(k.citations_in_map),
                                         "evidence": to_json(k.model_dump())}
                                        for i, k in enumerate(keys, start=1)])
        run.counts = result.counts
    return result


def find_map_seeds(graph: Graph, encoder: Encoder | None, request: EvolutionRequest
                   ) -> list[str]:
    if request.seed_paper is not None:
        if not graph.read("read_papers", ids=[request.seed_paper]):
            raise PaperNotFound(f"no paper {request.seed_paper!r} in the graph; give the id "
                                "of a loaded paper, or a topic")
        return [request.seed_paper]
    topic = request.topic or ""
    if not has_searchable_word(topic):
        raise InvalidRequest("the topic has no word to search for; describe it in words")
    hits = query_hits(graph, encoder, topic, request.limit, [])
    if not hits:
        raise InvalidRequest(f"no paper matches the topic {topic!r}; try other words")
    return [hit.id for hit in hits]


def bounded_neighbourhood(graph: Graph, seeds: list[str], max_papers: int
                          ) -> tuple[list[str], list[MapEdge]]:
    """The seeds and their neighbours (1.5 hops), at most max_papers of them: seeds first,
    then the neighbours with the most links to seeds."""
    hood = expand(graph, seeds, "1.5", [])
    seed_set = set(hood.seeds)
    links: dict[str, int] = {}
    for citing, cited in hood.edges:
        for end, other in ((citing, cited), (cited, citing)):
            if end not in seed_set and other in seed_set:
                links[end] = links.get(end, 0) + 1
    neighbours = sorted((n for n in hood.nodes if n not in seed_set),
                        key=lambda n: (-links.get(n, 0), n))
    kept = hood.seeds + neighbours[:max(0, max_papers - len(hood.seeds))]
    keep = set(kept)
    edges = [MapEdge(citing=u, cited=v, citing_year=None, cited_year=None)
             for u, v in hood.edges if u in keep and v in keep]
    return kept, edges


def read_map_papers(graph: Graph, nodes: list[str], seeds: list[str],
                    edges: list[MapEdge]) -> dict[str, MapPaper]:
    """The papers of the map, oldest first; fills in the years on the edges."""
    rows = {row["id"]: row for row in graph.read("read_papers", ids=nodes)}
    cited = {n: 0 for n in nodes}
    citing = {n: 0 for n in nodes}
    for edge in edges:
        cited[edge.cited] += 1
        citing[edge.citing] += 1
        edge.citing_year = rows[edge.citing]["year"]
        edge.cited_year = rows[edge.cited]["year"]
    seed_set = set(seeds)
    papers = [MapPaper(id=n, title=rows[n]["title"] or "", year=rows[n]["year"],
                       authors=rows[n]["authors"] or [], seed=n in seed_set,
                       citations_in_map=cited[n], references_in_map=citing[n],
                       summary=first_sentence(rows[n]["abstract"] or ""))
              for n in nodes]
    papers.sort(key=lambda p: (p.year is None, p.year or 0, p.id))
    return {p.id: p for p in papers}


def first_sentence(abstract: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", " ".join(abstract.split()))
    return match.group(1) if match else " ".join(abstract.split())[:300]


def key_papers(papers: dict[str, MapPaper], edges: list[MapEdge], top: int,
               min_citations: int) -> list[KeyPaper]:
    """KEY_RULE: cited by at least `min_citations` papers of the map, the `top` most cited
    within it; ties by all links within the map, then the earlier year, then the id."""
    eligible = [p for p in papers.values() if p.citations_in_map >= min_citations]
    eligible.sort(key=lambda p: (-p.citations_in_map,
                                 -(p.citations_in_map + p.references_in_map),
                                 p.year is None, p.year or 0, p.id))
    return [KeyPaper(id=p.id, title=p.title, year=p.year, citations_in_map=p.citations_in_map,
                     links_in_map=p.citations_in_map + p.references_in_map,
                     summary=p.summary)
            for p in eligible[:top]]


def group_by_year(papers: dict[str, MapPaper]) -> list[YearGroup]:
    """Year groups, oldest first, papers without a year last."""
    groups: dict[int | None, list[str]] = {}
    for paper in papers.values():
        groups.setdefault(paper.year, []).append(paper.id)
    order = sorted(groups, key=lambda y: (y is None, y or 0))
    return [YearGroup(year=year, paper_ids=groups[year]) for year in order]


def analyse_path(source: str, target: str, papers: dict[str, MapPaper],
                 edges: list[MapEdge]) -> PathAnalysis:
    """The shortest citation chain from source back to target (source cites ... cites
    target), else from target back to source, else the shortest link in either direction."""
    for name in (source, target):
        if name not in papers:
            return PathAnalysis(source=source, target=target, kind="none", papers=[],
                                steps=[], years=[],
                                notes=[f"{name} is not in this map; widen the map "
                                       "(max_papers, limit) or choose a paper of the map"])
    forward = {(e.citing, e.cited) for e in edges}
    attempts = (("source cites target", source, target, True),
                ("target cites source", target, source, True),
                ("mixed", source, target, False))
    for kind, start, end, directed in attempts:
        found = shortest_path(start, end, forward, directed)
        if found is not None:
            return describe_path(kind, source, target, found, forward, papers)
    return PathAnalysis(source=source, target=target, kind="none", papers=[], steps=[],
                        years=[], notes=["no chain of citations joins them in this map"])


def shortest_path(start: str, end: str, forward: set[tuple[str, str]],
                  directed: bool) -> list[str] | None:
    """Breadth-first over citing -> cited edges (both ways when not directed)."""
    nexts: dict[str, list[str]] = {}
    for citing, cited in sorted(forward):
        nexts.setdefault(citing, []).append(cited)
        if not directed:
            nexts.setdefault(cited, []).append(citing)
    before: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == end:
            route = [node]
            while (previous := before[route[-1]]) is not None:
                route.append(previous)
            return route[::-1]
        for other in nexts.get(node, []):
            if other not in before:
                before[other] = node
                queue.append(other)
    return None


def describe_path(kind: str, source: str, target: str, route: list[str],
                  forward: set[tuple[str, str]], papers: dict[str, MapPaper]) -> PathAnalysis:
    steps = []
    notes = []
    for a, b in zip(route, route[1:], strict=False):
        cites = (a, b) in forward
        citing, cited = (a, b) if cites else (b, a)
        steps.append(PathStep(citing=citing, cited=cited,
                              direction="cites" if cites else "cited by"))
        young, old = papers[citing].year, papers[cited].year
        if young is not None and old is not None and young < old:
            notes.append(f"{citing} ({young}) cites the later {cited} ({old}): a preprint "
                         "revised after publication, or a year to check")
    notes.append("a chain of citations shows how the papers refer to each other; it does "
                 "not show that one influenced the other")
    return PathAnalysis(source=source, target=target, kind=kind, papers=route, steps=steps,
                        years=[papers[p].year for p in route], notes=notes)


def compare_with_references(graph: Graph, references: list[ReferenceItem],
                            papers: dict[str, MapPaper]) -> ReferenceComparison:
    """Which reference papers the map holds, which the corpus holds but the map missed,
    and which the corpus lacks."""
    resolved = resolve_references(graph, references)
    in_map = [r for r in resolved if r.paper_id in papers]
    elsewhere = [r for r in resolved if r.paper_id is not None and r.paper_id not in papers]
    missing = [r for r in resolved if r.paper_id is None]
    matched = {r.paper_id for r in in_map}
    union = len(papers) + len(references) - len(matched)
    return ReferenceComparison(
        reference_count=len(references), map_count=len(papers), in_map=in_map,
        in_corpus_not_in_map=elsewhere, not_in_corpus=missing,
        coverage=round(len(in_map) / len(references), 4) if references else 0.0,
        map_share=round(len(matched) / len(papers), 4) if papers else 0.0,
        jaccard=round(len(matched) / union, 4) if union else 0.0)


def to_mermaid(papers: dict[str, MapPaper], edges: list[MapEdge], keys: set[str]) -> str:
    """A Mermaid flowchart: one subgraph per year (oldest first), arrows citing --> cited,
    key papers styled `key`, seeds `seed`."""
    node = {paper_id: f"p{index}" for index, paper_id in enumerate(papers)}
    lines = ["flowchart TB",
             "  %% Arrows: citing --> cited (a citation, not proof of influence).",
             "  %% Year groups: chronological, oldest first; a separate order from the arrows.",
             "  classDef key stroke-width:3px", "  classDef seed stroke-dasharray: 4 2"]
    for group in group_by_year(papers):
        label = str(group.year) if group.year is not None else "year unknown"
        lines.append(f'  subgraph y{group.year or "unknown"}["{label}"]')
        for paper_id in group.paper_ids:
            lines.append(f'    {node[paper_id]}["{mermaid_label(papers[paper_id])}"]')
        lines.append("  end")
    lines += [f"  {node[e.citing]} --> {node[e.cited]}" for e in edges]
    lines += [f"  class {node[p]} key" for p in papers if p in keys]
    lines += [f"  class {node[p]} seed" for p, paper in papers.items()
              if paper.seed and p not in keys]
    return "\n".join(lines) + "\n"


def mermaid_label(paper: MapPaper) -> str:
    title = paper.title if len(paper.title) <= TITLE_CHARS else paper.title[:TITLE_CHARS] + "…"
    # Mermaid reads " as the end of a label and # as the start of an entity.
    text = f"{paper.id}: {title}".replace("#", "#35;").replace('"', "#quot;")
    return re.sub(r"[\[\]{}<>|]", " ", text)
