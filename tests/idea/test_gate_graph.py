"""The citation gate on the real database: neighbours read per seed version and direction,
the read limit, exclusions, eligibility, and the admission counts."""

from collections.abc import Sequence
from typing import Any

import pytest

from crase.graph import Graph
from crase.idea.candidates import Assessment, Decision, NeighbourVerdict
from crase.idea.identity import IdentityRegistry
from crase.idea.neighbour_gate import run_gate
from crase.idea.providers import ProviderStatus
from crase.idea.request import IdeaRequest
from crase.idea.structuring import IdeaStructure
from crase.ingest.records import PaperRecord
from crase.models.chat import ModelRunner
from crase.settings import IdeaSettings
from tests.idea.builders import fulltext_hit, structure

pytestmark = pytest.mark.integration


class GradeByTitle:
    """Grades from the title's last word: 'zero' -> 0, 'three' -> 3, ...; none -> null."""

    name = "fixture-grader"
    words = {"zero": 0, "one": 1, "two": 2, "three": 3}

    def score(self, runner: ModelRunner, structure: IdeaStructure,
              papers: Sequence[PaperRecord], batch_size: int) -> list[NeighbourVerdict]:
        verdicts = []
        for paper in papers:
            if not paper.has_abstract:
                verdicts.append(NeighbourVerdict("no_abstract", None, "no abstract", self.name))
            else:
                grade = self.words[paper.title.split()[-1]]
                verdicts.append(NeighbourVerdict("graded", grade, "fixture", self.name))
        return verdicts

    def assess(self, runner: ModelRunner, structure: IdeaStructure,
               papers: Sequence[PaperRecord]) -> list[Assessment]:
        return [Assessment("assessed", 2, assessor=self.name) if p.has_abstract
                else Assessment("no_abstract", assessor=self.name) for p in papers]


def load(graph: Graph) -> None:
    """Seed S (two versions, S and S2) and seed T. S cites 20 papers (4 x zero, 6 x three,
    6 x two, 4 x one), is cited by 6 without an abstract and by one from 1990; S2 cites
    one more (three); T cites 3 (two) and the excluded paper X, which cites 'x-three'."""
    rows: list[dict[str, Any]] = []
    edges: list[tuple[str, str]] = []

    def paper(pid: str, title: str, abstract: str = "text", year: int = 2020) -> None:
        props: dict[str, Any] = {"title": title, "year": year}
        if abstract:
            props["abstract"] = abstract
        rows.append({"id": pid, "props": props})

    for pid, title in (("S", "Seed paper"), ("S2", "Seed paper"), ("T", "Second seed")):
        paper(pid, title)
    paper("X", "Excluded source")
    grades = ["zero"] * 4 + ["three"] * 6 + ["two"] * 6 + ["one"] * 4
    for n, word in enumerate(grades):
        paper(f"r{n}", f"Reference {n} {word}")
        edges.append(("S", f"r{n}"))
    for n in range(6):
        paper(f"c{n}", f"Citing {n} none", abstract="")
        edges.append((f"c{n}", "S"))
    paper("old", "Old citing three", year=1990)
    edges.append(("old", "S"))
    paper("v", "Version neighbour three")
    edges.append(("S2", "v"))
    for n in range(3):
        paper(f"t{n}", f"T reference {n} two")
        edges.append(("T", f"t{n}"))
    paper("xn", "Behind the excluded three")
    edges += [("T", "X"), ("X", "xn")]
    graph.write("merge_papers", rows=rows)
    graph.write("merge_citations", rows=[{"citing": a, "cited": b} for a, b in edges])


def seeded_registry() -> IdentityRegistry:
    registry = IdentityRegistry(excluded=frozenset({"X"}))
    for pid in ("S", "S2", "T"):
        work = registry.add(PaperRecord(id=pid, title="Seed paper" if pid != "T" else
                                        "Second seed", abstract="text", year=2020,
                                        arxiv_id="1111.1111" if pid != "T" else None),
                            fulltext_hit(1))
        assert work is not None
        work.selection = Decision(True, "fixture")
        work.assessment = Assessment("assessed", 3 if pid != "T" else 2)
    return registry


def test_gate_reads_the_graph_and_admits_by_the_rules(graph: Graph) -> None:
    load(graph)
    registry = seeded_registry()
    assert len(registry.works) == 2  # S and S2 share an arXiv id: one seed work
    params = IdeaSettings(neighbour_per_seed=10, neighbour_budget=20, neighbour_read_limit=18)
    request = IdeaRequest(idea="anything", exclude=["X"], year_min=2000, params=params)
    grader = GradeByTitle()
    report = run_gate(graph, registry, structure(), grader, grader, ModelRunner(), request,
                      None, ProviderStatus("semantic_scholar", False, "not probed", ""))
    assert [s["paper_id"] for s in report.seeds] == ["S", "T"]
    # S: 18 of 20 references (limit), 7 citing; S2: 1; T: 3 (X is excluded, and so is xn)
    assert report.neighbours_read == 18 + 7 + 1 + 3
    assert report.cut_by_read_limit == 2
    assert report.works == 29 and report.ineligible == 1  # 'old' is before 2000
    assert report.in_front_of_gate == 28
    assert report.unassessed == 6 and report.graded == 22
    # Read for S (ids in order, the limit cuts r8 and r9): 4 zero (r0-r3), 4 three (r4-r7)
    # plus v from S2, 6 two (r10-r15), 4 one (r16-r19). Per-seed cap 10: 5 three + 5 two
    # stay, 1 two + 4 one are cut. T: 3 two. Then the 6 unassessed citing papers bypass the
    # cap: 10 + 3 + 6 = 19 admitted, under the budget of 20.
    assert report.excluded_zero == 4
    assert report.excluded_per_seed_cap == 5
    assert report.excluded_global_budget == 0
    admitted = [w for w in registry.works if w.gate is not None and w.gate.kept
                and "admitted" in w.gate.reason]
    assert len(admitted) == report.admitted == 19
    assert sorted(w.paper_id for w in admitted if w.paper_id.startswith("c")) == \
        [f"c{n}" for n in range(6)]
    capped = sorted(w.paper_id for w in registry.works
                    if w.gate is not None and "per-seed cap" in w.gate.reason and not w.gate.kept)
    assert capped == ["r15", "r16", "r17", "r18", "r19"]
    assert all(w.assessment is not None for w in admitted)
    assert not any(w.paper_id in ("X", "xn") for w in registry.works)
    routes = {w.paper_id: w.routes for w in registry.works}
    assert routes["v"][0].detail["seed_id"] == "S2" and routes["v"][0].detail["seed"] == 1
