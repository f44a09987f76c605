"""A tiny corpus written for the API tests: 38 papers, 36 of them in three topics.

Each abstract is three sentences from its topic's pool; a paper cites the two papers
before it in its topic, and the two share sentences, so the offline claim extractor and
the MiniLM scorer ground those edges (Delta > 0). A few citations cross topics and share
nothing, so they are pruned at tau = 0.2; one of them strands a seed (ORPHAN).
"""

from typing import Any

from crase.api.batch_loads import load_batch
from crase.graph import Graph
from crase.settings import Settings

TOPICS: dict[str, tuple[str, list[str]]] = {
    "tachyon": ("Tachyon condensation on unstable D-branes", [
        "We show that the open string tachyon on a non-BPS D-brane condenses to the closed "
        "string vacuum.",
        "The tension of the unstable D-brane is exactly cancelled by the negative energy of "
        "the tachyon potential at its minimum.",
        "Level truncation of cubic open string field theory reproduces ninety-nine percent of "
        "the D-brane tension.",
        "Lower-dimensional D-branes appear as tachyonic kink solutions on the unstable brane.",
        "We compute the tachyon effective action from boundary string field theory.",
        "Rolling tachyon solutions describe the decay of unstable D-branes into closed "
        "string radiation.",
        "The gauge field on the brane becomes confined after tachyon condensation.",
        "Vacuum string field theory describes the theory around the tachyon vacuum.",
    ]),
    "entropy": ("Black hole entropy from string microstates", [
        "We count the microscopic states of extremal black holes built from D-branes.",
        "The degeneracy of BPS states reproduces the Bekenstein-Hawking area law exactly.",
        "Near-extremal black holes emit Hawking radiation that matches the D-brane "
        "absorption cross section.",
        "Five-dimensional rotating black holes have an entropy given by the Cardy formula.",
        "Higher derivative corrections to the black hole entropy agree with subleading "
        "microstate counting.",
        "We argue that the information paradox is resolved by unitary D-brane dynamics.",
        "The greybody factors of the black hole are reproduced by an effective string model.",
        "Attractor equations fix the scalar fields at the horizon of supersymmetric black holes.",
    ]),
    "holography": ("Holographic duality between gauge theory and anti-de Sitter gravity", [
        "We propose that N=4 super Yang-Mills theory is dual to type IIB strings on AdS5 x S5.",
        "Correlation functions of the gauge theory are computed from the supergravity action "
        "on anti-de Sitter space.",
        "The Wilson loop expectation value is given by the area of a minimal string worldsheet.",
        "Finite temperature gauge theory corresponds to a black brane in anti-de Sitter space.",
        "Confinement in the dual gauge theory follows from a cutoff in the radial direction.",
        "The conformal anomaly of the boundary theory is reproduced by holographic "
        "renormalization.",
        "Spectra of chiral primary operators match the Kaluza-Klein modes on the five-sphere.",
        "The shear viscosity to entropy density ratio of the plasma is one over four pi.",
    ]),
}
PAPERS_PER_TOPIC = 12
CROSS_CITATIONS = [("tachyon-07", "entropy-03"), ("entropy-09", "holography-02"),
                   ("holography-10", "tachyon-04")]
# A recent paper that matches the query word for word but only cites a paper about
# baking it shares nothing with: a seed whose one edge is pruned, so the run cuts it.
ORPHAN = {"id": "orphan-00",
          "title": "Tachyon condensation on unstable D-branes in open string field theory",
          "abstract": "We review the history of the subject for a general audience.",
          "year": 2009, "authors": ["O. Lonely"]}
UNRELATED = {"id": "unrelated-00", "title": "Sourdough fermentation in home kitchens",
             "abstract": "Wild yeast and lactic bacteria leaven rye bread overnight. "
                         "Warm water speeds up the rise of the dough.",
             "year": 1990, "authors": ["B. Baker"]}
QUERY = "tachyon condensation on unstable D-branes in open string field theory"


def paper_id(topic: str, index: int) -> str:
    return f"{topic}-{index:02d}"


def fixture_corpus() -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """(papers, citations) in the API's batch format."""
    papers, citations = [], []
    for topic, (title, pool) in TOPICS.items():
        for index in range(PAPERS_PER_TOPIC):
            sentences = [pool[(index + shift) % len(pool)] for shift in (0, 1, 3)]
            papers.append({
                "id": paper_id(topic, index),
                "title": f"{title}, part {index + 1}",
                "abstract": " ".join(sentences),
                "year": 1994 + index,
                "authors": [f"Author {topic.title()} {index}", "A. N. Other"],
                "arxiv_id": f"hep-th/{9400000 + index * 100 + len(topic)}",
            })
            for back in (1, 2):
                if index - back >= 0:
                    citations.append({"citing_id": paper_id(topic, index),
                                      "cited_id": paper_id(topic, index - back)})
    citations += [{"citing_id": u, "cited_id": v} for u, v in CROSS_CITATIONS]
    papers += [ORPHAN, UNRELATED]
    citations.append({"citing_id": ORPHAN["id"], "cited_id": UNRELATED["id"]})
    return papers, citations


def load_corpus_into(graph: Graph, settings: Settings) -> dict[str, Any]:
    """The fixture corpus, written by the loader (what POST /papers/batch calls, without
    the HTTP round trip); returns the load's answer in the route's shape."""
    papers, citations = fixture_corpus()
    edges = [(edge["citing_id"], edge["cited_id"]) for edge in citations]
    return load_batch(graph, settings, papers, edges).as_json()
