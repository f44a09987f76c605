"""A small corpus for the integration tests, built in code and written with the load's
own MERGE queries: three topics, citation edges, a missing abstract, two versions of one
work, a paper outside the year range and a benchmark source paper to exclude."""

from typing import Any

from crase.graph import Graph

IDEA = ("Recognise new image categories from a few labelled examples by building a graph "
        "over the support images and passing messages with a graph neural network.")

TOPIC = [
    ("fs1", "Few-shot learning with graph neural networks",
     "We build a graph over the support and query images and use a graph neural network to "
     "propagate labels by message passing for few-shot image classification.", 2018),
    ("fs2", "Edge-labeling graph neural network for few-shot learning",
     "A graph neural network predicts edge labels between few-shot examples; message "
     "passing over the support graph improves image classification with few labels.", 2019),
    ("fs3", "Transductive propagation network for few-shot learning",
     "Label propagation on a graph of support and query images learns to classify new "
     "categories from a few labelled examples.", 2019),
    ("fs4", "Prototypical networks for few-shot learning",
     "Few-shot image classification with one prototype per class computed from the "
     "labelled support examples; no relations between examples are used.", 2017),
    ("fs5", "Matching networks for one shot learning",
     "Attention over a small labelled support set classifies new image categories in one "
     "shot learning.", 2016),
    ("fs6", "Relation network for few-shot image recognition",
     "A learned relation module compares query images with few labelled support images "
     "to recognise new categories.", 2018),
    ("fs7", "Meta-learning for few-shot image classification: a survey",
     "We survey meta-learning methods for recognising new image categories from few "
     "labelled examples, including graph-based and metric-based approaches.", 2020),
    ("gnn1", "Neural message passing for quantum chemistry",
     "Message passing neural networks on molecular graphs predict chemical properties.",
     2017),
    ("gnn2", "Semi-supervised classification with graph convolutional networks",
     "Graph convolutional networks classify nodes of a citation graph with few labels.",
     2017),
    ("gnn3", "Graph attention networks",
     "Attention over graph neighbourhoods for node classification with graph neural "
     "networks.", 2018),
    ("w1", "Numerical weather prediction with ensembles",
     "Ensemble forecasts of temperature and rainfall from atmospheric models.", 2016),
    ("w2", "Statistical downscaling of rainfall",
     "Regression methods downscale rainfall projections to local stations.", 2015),
    ("w3", "Seasonal drought indices", "Drought indices from soil moisture records.", 2019),
    # Reachable through citations only: its words do not match the idea's.
    ("cite1", "Support-set relational reasoning for novel category recognition",
     "Relational reasoning over a handful of annotated exemplars recognises novel visual "
     "categories.", 2019),
    ("noabs", "Adaptive representations for scarce supervision", "", 2020),
    ("old1", "Few-shot image classification with graph neural networks, an early view",
     "An early graph neural network for few-shot image classification with message passing "
     "between labelled support images.", 2009),
    # Two versions of one work: the same arXiv id on two nodes.
    ("v1", "Graph neural networks for few-shot image classification",
     "Message passing between few labelled support images with a graph neural network "
     "classifies new image categories.", 2020),
    ("v2", "Graph neural networks for few-shot image classification",
     "Message passing between few labelled support images with a graph neural network "
     "classifies new image categories (extended version).", 2021),
    ("src", "A benchmark source paper on graph few-shot image classification",
     "The source paper of a benchmark query: graph neural networks, message passing, "
     "few-shot image classification.", 2022),
]
ARXIV = {"v1": "2001.01234", "v2": "2001.01234v2", "fs1": "1711.04043", "fs2": "1905.01436"}
DOI = {"fs4": "10.5555/proto", "cite1": "10.5555/support"}
CITES = [("fs2", "fs1"), ("fs3", "fs1"), ("fs2", "cite1"), ("fs1", "cite1"), ("fs3", "cite1"),
         ("fs1", "fs4"), ("fs1", "fs5"), ("fs6", "fs5"), ("fs7", "fs1"), ("fs7", "fs2"),
         ("fs1", "noabs"), ("fs1", "w1"), ("src", "fs1"), ("src", "fs2"), ("src", "cite1"),
         ("gnn3", "gnn2"), ("fs1", "gnn1"), ("v2", "fs1")]


def paper_rows() -> list[dict[str, Any]]:
    rows = []
    for pid, title, abstract, year in TOPIC:
        props: dict[str, Any] = {"title": title, "year": year, "authors": ["A. Author"]}
        if abstract:
            props["abstract"] = abstract
        if pid in ARXIV:
            props["arxiv_id"] = ARXIV[pid]
        if pid in DOI:
            props["doi"] = DOI[pid]
        rows.append({"id": pid, "props": props})
    return rows


def load_fixture_corpus(graph: Graph) -> None:
    graph.write("merge_papers", rows=paper_rows())
    graph.write("merge_citations", rows=[{"citing": a, "cited": b} for a, b in CITES])
    graph.read("await_indexes", seconds=30)
