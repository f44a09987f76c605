"""Evidence paths over the retained graph (crase.search.evidence); pruning is tested with
its rule in tests/scoring/test_delta.py."""

from crase.search.evidence import build_evidence, nearest_seed_paths


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
