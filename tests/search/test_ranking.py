from crase.search.evidence import build_evidence, nearest_seed_paths
from crase.search.ranking import prune

EDGES = [("a", "b"), ("b", "c"), ("c", "d"), ("e", "a"), ("f", "g")]


def test_prune_drops_weak_edges_then_isolated_nodes() -> None:
    delta = {("a", "b"): 0.4, ("b", "c"): 0.0, ("c", "d"): 0.6, ("e", "a"): 0.2}
    pruned = prune(list("abcdefg"), EDGES, delta, seeds=["a", "f"], tau=0.2)
    assert pruned.edges == {("a", "b"): 0.4, ("c", "d"): 0.6}
    assert pruned.pruned_edges[("b", "c")].startswith("delta 0.000 <= tau")
    assert pruned.pruned_edges[("f", "g")] == "not scored"
    assert pruned.nodes == ["a", "b", "c", "d"]
    assert set(pruned.dropped_nodes) == {"e", "f", "g"}
    assert pruned.seeds == ["a"]


def test_tau_zero_keeps_any_positive_delta() -> None:
    delta = {e: 0.01 for e in EDGES}
    assert len(prune(list("abcdefg"), EDGES, delta, ["a"], 0.0).edges) == 5


def test_nearest_seed_paths_follow_the_orientation() -> None:
    edges = {("a", "b"): 1.0, ("b", "c"): 1.0, ("d", "c"): 1.0}
    forward = nearest_seed_paths(edges, ["a"], "references")
    assert forward["c"] == ("a", [("a", "b"), ("b", "c")])
    assert "d" not in forward
    both = nearest_seed_paths(edges, ["a"], "both")
    assert both["d"] == ("a", [("a", "b"), ("b", "c"), ("d", "c")])
    backward = nearest_seed_paths(edges, ["c"], "citing")
    assert set(backward) == {"a", "b", "c", "d"}


def test_evidence_names_path_and_strongest_edges() -> None:
    edges = {("a", "b"): 0.5, ("b", "c"): 0.25, ("x", "c"): 0.75}
    evidence = build_evidence(["c", "a"], edges, ["a"], "references")
    assert evidence["a"].seed and evidence["a"].path == []
    c = evidence["c"]
    assert c.reached_from == "a"
    assert [(e.citing, e.cited, e.delta) for e in c.path] == [("a", "b", 0.5), ("b", "c", 0.25)]
    assert [(e.citing, e.cited) for e in c.strongest_edges] == [("x", "c")]
