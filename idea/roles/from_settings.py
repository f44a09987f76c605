"""Which backend serves each idea role: the model endpoint of the role where one is
configured, the offline backend otherwise. The names go into the Run node and the audit.

Roles and their endpoints (`ModelSettings`): structuring -> planner, recall -> expert,
abstract assessment -> assessor, neighbour grades -> neighbour_scorer, ranking -> expert,
report -> reporter (with refine_fulltext on the assessor endpoint).
"""


from crase.idea.final_order.model import final_order_at
from crase.idea.roles.model import (
    ModelAssessor,
    ModelExpert,
    ModelNeighbourScorer,
    ModelRecaller,
    ModelReporter,
    ModelStructurer,
)
from crase.idea.roles.offline_assessor import OfflineAssessor
from crase.idea.roles.offline_expert import OfflineExpert
from crase.idea.roles.offline_report import OfflineReporter
from crase.idea.roles.offline_structure import OfflineRecaller, OfflineStructurer
from crase.idea.roles.protocols import (
    Assessor,
    Expert,
    IdeaBackends,
    NeighbourScorer,
    Recaller,
    Reporter,
    Structurer,
)
from crase.models.embedding_cache import CachedEncoder, TextEncoder
from crase.models.paper_encoders import paper_encoder
from crase.models.reply_cache import ReplyCache
from crase.settings import Settings


def build_idea_backends(settings: Settings, encoder: TextEncoder | None = None,
                        final_order: bool = True) -> IdeaBackends:
    """Build once and reuse: the offline backends keep the embedding model in memory (and
    its vectors on disk under var/embedding-cache unless idea.embedding_cache is off).
    Without `final_order` the offline expert orders by its fused score alone, and no final
    order model is read (its trainer, and the benchmark that compares the two)."""
    models = settings.models
    offline_needed = not (models.assessor.configured and models.neighbour_scorer.configured
                          and models.expert.configured)
    if encoder is None and offline_needed:
        encoder = paper_encoder(models.paper_encoder)
        if settings.idea.embedding_cache:
            encoder = CachedEncoder(encoder, settings.var_dir / "embedding-cache")
    offline_assessor = OfflineAssessor(encoder) if encoder is not None else None
    structurer: Structurer = (ModelStructurer(models.planner) if models.planner.configured
                              else OfflineStructurer())
    recaller: Recaller = (ModelRecaller(models.expert) if models.expert.configured
                          else OfflineRecaller())
    assessor: Assessor | None = (ModelAssessor(models.assessor) if models.assessor.configured
                                 else offline_assessor)
    scorer: NeighbourScorer | None = (ModelNeighbourScorer(models.neighbour_scorer)
                                      if models.neighbour_scorer.configured
                                      else offline_assessor)
    expert: Expert | None = (ModelExpert(models.expert) if models.expert.configured
                             else OfflineExpert(encoder, final_order_at(models.idea_order_model)
                                                if final_order else None)
                             if encoder is not None else None)
    reporter: Reporter = (ModelReporter(models.reporter, models.assessor
                                        if models.assessor.configured else None)
                          if models.reporter.configured else OfflineReporter())
    assert assessor is not None and scorer is not None and expert is not None  # encoder set
    return IdeaBackends(
        structurer=structurer, recaller=recaller, assessor=assessor, neighbour_scorer=scorer,
        expert=expert, reporter=reporter, providers=settings.providers,
        runs_dir=settings.var_dir / "runs",
        cache=ReplyCache.from_settings(models),
        encoder=encoder,
    )


def describe_idea_backends(backends: IdeaBackends) -> str:
    names = backends.names()
    offline = [role for role, name in names.items() if name.startswith("offline")]
    if len(offline) == len(names):
        return "offline backends (no model endpoint configured)"
    if offline:
        return f"model endpoints, offline for: {', '.join(offline)}"
    return "model endpoints for every idea role"
