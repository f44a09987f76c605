"""Which backend serves each search role: a model endpoint where one is configured, the
offline backend otherwise. Every backend's name is recorded on the Run, so an offline
result is never mistaken for a model result.
"""

from crase.models.chat import ModelRunner
from crase.models.claim_encoders import claim_encoder
from crase.models.minilm import SentenceEncoder
from crase.models.paper_encoders import paper_encoder
from crase.search.roles.classifier_entailment import ClassifierEntailmentScorer
from crase.search.roles.cosine_entailment import CosineEntailmentScorer
from crase.search.roles.model import build_model_backends
from crase.search.roles.offline_claims import OfflineClaimExtractor
from crase.search.roles.offline_planner import OfflinePlanner
from crase.search.roles.protocols import EntailmentScorer, SearchBackends
from crase.settings import ModelSettings, Settings


def build_search_backends(settings: Settings, encoder: SentenceEncoder | None = None,
                          runner: ModelRunner | None = None) -> SearchBackends:
    """Build once and reuse: the offline scorer keeps the embedding model in memory.
    `runner` (default: one from the settings) carries the ledger every model call goes to."""
    model = build_model_backends(settings, runner or ModelRunner.from_settings(settings.models))
    # The paper encoder embeds the query, as it embedded the stored paper vectors (weights
    # loaded on first use); claims go to the encoder the settings choose (by default the
    # int8 one where installed), this same one where both choices name one encoder.
    encoder = encoder or paper_encoder(settings.models.paper_encoder)
    scorer = model.entailment or offline_scorer(settings.models, encoder)
    return SearchBackends(
        planner=model.planner or OfflinePlanner(),
        extractor=model.claims or OfflineClaimExtractor(),
        scorer=scorer,
        encoder=encoder,
        provider=settings.providers,
        order_model=settings.models.order_model,
    )


def offline_scorer(models: ModelSettings, encoder: SentenceEncoder) -> EntailmentScorer:
    """The scorer `models.entailment_scorer` names. The classifier reads the int8 MiniLM
    vectors it was trained on, whatever claim_encoder says (that setting picks the cosine
    scorer's encoder); `encoder` is shared where it is that one."""
    if models.entailment_scorer == "classifier":
        return ClassifierEntailmentScorer(models.entailment_model,
                                          claim_encoder("onnx-int8", encoder))
    return CosineEntailmentScorer(claim_encoder(models.claim_encoder, encoder))


def describe_backends(backends: SearchBackends) -> str:
    offline = [role for role, name in backends.names().items() if name.startswith("offline")]
    if len(offline) == 3:
        return "offline backends (no model endpoint configured)"
    if offline:
        return f"model endpoints, offline for: {', '.join(offline)}"
    return "model endpoints for every role"
