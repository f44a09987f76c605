"""POST /evolution, /citation-gaps and /landscape: the literature extensions over HTTP.

Each answers when its run has ended (they read the graph and embed a few hundred sentences
at most; no background queue), with the run id under which the Run node and its report are
stored; GET /runs/{id} shows the run like any other.
"""

from functools import cache

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from crase.api.bulkheads import Bulkheads
from crase.graph import Graph
from crase.models.minilm import SentenceEncoder
from crase.models.paper_encoders import paper_encoder
from crase.research.citation_gaps import GapReport, GapRequest, find_citation_gaps
from crase.research.evolution import EvolutionMap, EvolutionRequest, map_evolution
from crase.research.landscape import Landscape, LandscapeRequest, map_landscape
from crase.settings import PaperEncoderChoice, Settings


@cache
def shared_encoder(choice: PaperEncoderChoice) -> SentenceEncoder:
    """One paper encoder per process: its weights load once, and it is safe to share."""
    return paper_encoder(choice)


class LiteratureController(Controller):
    path = "/"
    tags = ["literature"]

    @post("/evolution", status_code=200, sync_to_thread=True,
          summary="Evolution map of a topic or seed paper: citation graph by year, key "
                  "papers, paths, Mermaid, comparison with a reference list")
    def evolution(self, data: JSONBody[EvolutionRequest], graph: NamedDependency[Graph],
                  settings: NamedDependency[Settings],
                  bulkheads: NamedDependency[Bulkheads]) -> EvolutionMap:
        with bulkheads.slot("literature"):
            encoder = (shared_encoder(settings.models.paper_encoder)
                       if data.topic is not None else None)
            return map_evolution(graph, encoder, data)

    @post("/citation-gaps", status_code=200, sync_to_thread=True,
          summary="Papers a draft excerpt plausibly should cite, with the passage each fits")
    def citation_gaps(self, data: JSONBody[GapRequest], graph: NamedDependency[Graph],
                      settings: NamedDependency[Settings],
                      bulkheads: NamedDependency[Bulkheads]) -> GapReport:
        with bulkheads.slot("citation_gaps"):
            return find_citation_gaps(graph, shared_encoder(settings.models.paper_encoder),
                                      data, settings.models,
                                      max_references=settings.api.citation_gaps_max_references)

    @post("/landscape", status_code=200, sync_to_thread=True,
          summary="Data sets, metrics and method families named in a topic's papers "
                  "(a preliminary exploration)")
    def landscape(self, data: JSONBody[LandscapeRequest], graph: NamedDependency[Graph],
                  settings: NamedDependency[Settings],
                  bulkheads: NamedDependency[Bulkheads]) -> Landscape:
        with bulkheads.slot("literature"):
            return map_landscape(graph, shared_encoder(settings.models.paper_encoder), data,
                                 settings.models)


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [LiteratureController]
