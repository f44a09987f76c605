"""The same works from our own format, the OpenAlex snapshot and the Semantic Scholar
datasets, loaded one after the other into one graph, are one node each."""

import json
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.graph import Graph
from tests.ingest.test_openalex import graph_papers
from tests.ingest.test_s2ag import SEPSIS_ID, graph_signals

# Our own format, with ids of its own: Vaswani et al. by arXiv id, Bahdanau et al. by DOI
# (which OpenAlex has) and arXiv id (which Semantic Scholar has).
OWN_PAPERS = [
    {"id": "vaswani2017", "title": "Attention Is All You Need", "year": 2017,
     "arxiv_id": "1706.03762", "categories": ["cs.CL"]},
    {"id": "bahdanau2014", "title": "Neural Machine Translation by Jointly Learning to "
     "Align and Translate", "year": 2014, "doi": "10.1000/nmt.2014", "arxiv_id": "1409.0473"},
]
MERGED_EDGES = [("1810.04805", "bahdanau2014"), ("1810.04805", "vaswani2017"),
                ("openalex:W1003", "bahdanau2014"), (SEPSIS_ID, "vaswani2017"),
                ("vaswani2017", "bahdanau2014"), ("vaswani2017", "openalex:W1003")]


def own_corpus(folder: Path) -> Path:
    folder.mkdir()
    (folder / "papers.jsonl").write_text("".join(json.dumps(p) + "\n" for p in OWN_PAPERS))
    (folder / "citations.csv").write_text("citing_id,cited_id\nvaswani2017,bahdanau2014\n")
    return folder


@pytest.mark.integration
def test_one_work_from_three_sources_is_one_node(
        openalex_works: Path, s2ag_datasets: Path, graph: Graph, cli_env: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(own_corpus(cli_env / "own")), "--quiet"]) == 0
    assert main(["load", str(openalex_works), "--format", "openalex", "--quiet"]) == 0
    assert "merged     2 works" in capsys.readouterr().out
    # Again: the same merged copy, found loaded (its files were kept as they were).
    assert main(["load", str(openalex_works), "--format", "openalex", "--quiet"]) == 0
    again = capsys.readouterr().out
    assert "reused" in again and "unchanged since its last load" in again
    assert main(["load", str(s2ag_datasets), "--format", "s2ag", "--quiet"]) == 0
    # Vaswani et al. by arXiv id; Bahdanau et al. by DOI from OpenAlex and by arXiv id from
    # Semantic Scholar; BERT by arXiv id, from both datasets.
    assert "merged     2 works" in capsys.readouterr().out
    nodes, edges = graph_papers(graph)
    assert [node["id"] for node in nodes] == [
        "1810.04805", "bahdanau2014", "openalex:W1003", SEPSIS_ID, "vaswani2017"]
    assert edges == MERGED_EDGES
    vaswani = nodes[-1]
    # Our own fields stay; what the datasets add (authors, abstract, ids) is filled in.
    assert vaswani["categories"] == ["cs.CL"] and vaswani["authors"]
    assert vaswani["s2_id"] == "204e3073870fae3d05bcbc2f6a8e263d9b72e776"
    assert graph_signals(graph)[("1810.04805", "vaswani2017")] == (
        True, ["methodology", "background"])
