"""All settings in one object, read from the environment (prefix CRASE_, nested with __)
and from a `.env` file. Code receives a Settings instance; nothing below this module reads
os.environ.

Local state lives under `var_dir` (default: `var/` in the directory Crase is started from,
the checkout for `make`); the server home and the model-reply cache follow it unless set
on their own. The jars stay where `make jars` put them (`var/neo4j` of the checkout). No
path is derived from where the source files are installed.
"""

import warnings
from collections.abc import Mapping
from copy import copy
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, SecretStr, create_model, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict


def local_var_dir() -> Path:
    """`var/` in the current directory: the default home of all local state."""
    return Path.cwd() / "var"


class DatabaseSettings(BaseModel):
    uri: str | None = Field(
        None, description="Bolt URI of an existing Neo4j; unset means the self-managed server"
    )
    user: str = Field("neo4j", description="Database user")
    password: str | None = Field(
        None, description="Database password; unset means the generated one in var/neo4j/password"
    )
    database: str = Field("neo4j", description="Database name")
    home: Path = Field(default_factory=lambda: local_var_dir() / "neo4j",
                       description="Self-managed server home (default var_dir/neo4j)")
    # Where `make jars` assembles them: an install artefact, so it does not follow var_dir.
    jars_dir: Path = Field(default_factory=lambda: local_var_dir() / "neo4j",
                           description="Assembled Neo4j jars, lib/ and plugins/ (`make jars`)")
    listen_address: str = Field("127.0.0.1", description="Address the server binds to")
    bolt_port: int = Field(7687, description="Bolt port of the self-managed server")
    http_port: int = Field(7474, description="HTTP port (Neo4j Browser) of the server")
    heap: str = Field("2g", description="Java heap of the self-managed server")
    pagecache: str = Field("1g", description="Page cache of the self-managed server")
    start_timeout_s: float = Field(120.0, description="How long to wait for Bolt to answer")
    read_timeout_s: float = Field(
        60.0, gt=0, le=86_400, allow_inf_nan=False,
        description="Transaction timeout of every read the application sends that sets none "
        "of its own: the database ends the read past it")
    transaction_memory: str = Field(
        "512m", pattern=r"^[1-9][0-9]*[kmgKMG]?$",
        description="The self-managed server's db.memory.transaction.max: the most heap one "
        "transaction may use (e.g. 512m, 1g); past it the database ends that transaction "
        "(QueryMemoryExceeded) instead of running out of heap for every other one")
    transaction_timeout_s: float = Field(
        900.0, gt=0, le=86_400, allow_inf_nan=False,
        description="The self-managed server's db.transaction.timeout: the longest any "
        "transaction may run (Neo4j Browser's included) before the database ends it")

    def bolt_uri(self) -> str:
        return self.uri or f"bolt://{self.listen_address}:{self.bolt_port}"

    def browser_url(self) -> str:
        return f"http://{self.listen_address}:{self.http_port}/browser/"


# The choices of the search's parameters: one alias each, so that the command line, the
# web form, the HTTP schema, the benchmark and the code that acts on a value all read the
# same list (a new choice is added here and where it is implemented, nowhere else).
SeedRule = Literal["relevance", "relevance-and-recency"]
SeedWeights = Literal["relevance", "uniform"]
Hops = Literal["1", "1.5", "2"]
SearchSource = Literal["local", "semantic-scholar", "openalex"]
WalkMethod = Literal["ppr", "salsa"]
Orientation = Literal["references", "citing", "both"]
Weighting = Literal["coverage", "uniform", "influential"]
Fill = Literal["none", "text"]
Order = Literal["walk", "learned"]


# Settings renamed in this release, old name -> new: the old name is still read, with a
# deprecation message, until the next release. A new name may sit in a nested group
# ("models.order_model"). Where two old names lead to one new name, the first listed wins
# when both are given: order_model was the newer name of ranker_model.
RENAMED_SEARCH_SETTINGS = {"ranker": "walk"}
RENAMED_SETTINGS = {"order_model": "models.order_model", "ranker_model": "models.order_model"}


def renamed_settings(data: Any, renames: dict[str, str], where: str,
                     what: str = "the setting") -> Any:
    """`data` with each old setting name moved to its new one (a value given under the new
    name wins), and a FutureWarning for each old name used. `what` says what was renamed
    (a request's field is renamed the same way)."""
    if not isinstance(data, dict) or not renames.keys() & data.keys():
        return data
    data = dict(data)
    for old, new in renames.items():
        if old in data:
            value = data.pop(old)
            group, _, name = new.rpartition(".")
            if group:
                data[group] = with_default(data.get(group), name, value)
            else:
                data.setdefault(name, value)
            warnings.warn(f"{what} {where}{old} is now {where}{new}; {old} is read until "
                          "the next release", FutureWarning, stacklevel=2)
    return data


def with_default(group: Any, name: str, value: Any) -> Any:
    """A nested group of settings (absent, a mapping or a settings model) with `name` set
    to `value` where the group does not give it already."""
    if isinstance(group, BaseModel):
        if name in group.model_fields_set:
            return group
        # Validated again from the fields it was given, so the value is checked and what
        # was left at its default stays so (paths left at theirs follow var_dir).
        given = {field: getattr(group, field) for field in group.model_fields_set}
        return type(group).model_validate({**given, name: value})
    if group is None:
        return {name: value}
    if isinstance(group, Mapping):
        return {name: value, **group}
    return group  # not a group of settings: the group's own validation says so


def choices(model: type[BaseModel], name: str) -> tuple[str, ...]:
    """The values a Literal field of a settings model allows, in their declared order;
    () for a field that is not a Literal."""
    annotation = model.model_fields[name].annotation
    return get_args(annotation) if get_origin(annotation) is Literal else ()


class SearchSettings(BaseModel):
    query_seeds: int = Field(
        10, ge=0, le=100,
        description="Top full-text hits of the query itself kept as seeds; 0 = seeds come "
        "from the plan's sub-queries only (the Crase paper's rule). 10 ships: on hep-th the "
        "query's own hits seed better than keyword sub-queries (docs/benchmarks/report.md)",
    )
    sub_queries: int = Field(
        0, ge=0, le=20,
        description="L: keyword sub-queries in the plan, each searched for m more seeds; 0 "
        "ships, because the offline planner's sub-queries lowered every figure on hep-th",
    )
    seeds_per_query: int = Field(5, ge=1, le=100, description="m: seeds kept per sub-query")
    seed_pool: int = Field(
        50, ge=1, le=1000,
        description="Top hits per search considered for seeds (1 to 1000: k's own ceiling)",
    )
    seed_rule: SeedRule = Field(
        "relevance",
        description="Which hits of a search become seeds: the most relevant (ties to the "
        "newer), or those high in both the relevance and the recency ranking (the paper's)",
    )
    seed_weights: SeedWeights = Field(
        "relevance",
        description="The walk's restart mass per seed: relevance = 1 / rank^2 in its search "
        "(summed over searches), uniform = the same for every seed (the paper's)",
    )
    sub_query_weight: float = Field(
        0.1, ge=0, le=1, allow_inf_nan=False,
        description="Restart weight of a sub-query's seeds relative to the query's own search",
    )
    hops: Hops = Field("1.5", description="Neighbourhood radius")
    source: SearchSource = Field(
        "local",
        description="Where seeds and their neighbourhood come from: the local full-text "
        "index and graph, or one Semantic Scholar (or OpenAlex) search per sub-query with "
        "the seeds' references, citations and the edges among them fetched into the graph "
        "(docs/semantic-scholar.md, docs/ingest.md#your-field-from-your-library)",
    )
    theta: float = Field(
        0.4, ge=0, le=1, allow_inf_nan=False,
        description="Entailment threshold for a grounded claim; 0.4 is calibrated for the "
        "offline cosine scorer on hep-th (python -m crase.bench.calibrate_theta)",
    )
    tau: float = Field(0.0, ge=0, le=1, allow_inf_nan=False,
                       description="Edges with Delta <= tau are pruned")
    beta: float = Field(
        0.5, ge=0, le=10, allow_inf_nan=False,
        description="Recency exponent: w = Delta * age^-beta; 0 to 10 (at 10 a paper ten "
        "years old already weighs 1e-10 of this year's)",
    )
    alpha: float = Field(0.15, gt=0, lt=1, allow_inf_nan=False,
                         description="Teleport probability of the walk")
    k: int = Field(50, ge=1, le=1000, description="Papers returned")
    walk: WalkMethod = Field(
        "ppr",
        description="The walk that ranks the neighbourhood: ppr = personalized PageRank on "
        "GDS, salsa = SALSA in numpy (search/walk.py); not the learned order (`order`)",
    )
    orientation: Orientation = Field(
        "both", description="Direction the walk follows citation edges"
    )
    weighting: Weighting = Field(
        "uniform",
        description="Edge weights of the walk: coverage = Delta * age^-beta after pruning "
        "(claims and entailment on every edge, the Crase paper's design); uniform = every "
        "neighbourhood edge weighs 1, no claims, no Delta, no pruning. uniform ships: "
        "Delta weighting lowered recall with the offline cosine scorer and lowered MAP@50 "
        "with the claim-pair classifier, on hep-th and cs768 alike (docs/entailment.md); "
        "use coverage with an entailment model that passes its benchmark. "
        "influential = the publisher's own mark instead of Delta: a citation the Semantic "
        "Scholar citations dataset marks influential weighs influential_weight, any other "
        "1 (no claims, no pruning; a corpus without the mark walks as uniform)",
    )
    influential_weight: float = Field(
        3.0, ge=1, le=100, allow_inf_nan=False,
        description="Weight of a citation marked influential under weighting influential "
        "(1 to 100; any other citation weighs 1)",
    )
    fill: Fill = Field(
        "text",
        description="When the walk ranks fewer than k papers (a thin citation graph), fill "
        "the rest with the query's full-text hits, marked text_match; none = the walk only",
    )
    order: Order = Field(
        "learned",
        description="The final order: learned = a model per query form over each "
        "candidate's evidence (walk rank, BM25 and embedding ranks, links to the seeds, "
        "co-citation and coupling, citations by the query's text hits, degrees, age; from "
        "given papers also their corpus-wide co-citation and coupling, vector closeness, "
        "shared authors and citation age; linear for text and words, LambdaRank from "
        "papers; search/order/model.py) orders the walk's top 200, the query's top 100 BM25 "
        "and embedding hits and the papers those hits cite most; where the walk ranks fewer than 3 "
        "papers per seed (the graph adds almost nothing to the seeds) the query's own text "
        "ranking orders the walk's and the fill's papers, whatever k is; walk = "
        "the walk's scores, then the text fill. learned ships: R@50 +0.021 on hep-th, "
        "+0.077 on cs768 (never trained on), CSFCube MAP@50 +0.020; from 3 given papers "
        "LambdaRank over the linear model R@50 +0.020 on hep-th, +0.148 on cs768 "
        "(docs/retrieval-quality.md)",
    )
    # Bounded: GDS allocates per iteration, and 10^9 iterations ran it out of memory.
    max_iterations: int = Field(
        100, ge=1, le=1000,
        description="PageRank iterations at most (1 to 1000)",
    )
    tolerance: float = Field(
        1e-9, gt=0, le=0.1, allow_inf_nan=False,
        description="PageRank convergence tolerance (above 0, at most 0.1)",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        return renamed_settings(data, RENAMED_SEARCH_SETTINGS, "search.")

    @model_validator(mode="after")
    def _some_search(self) -> "SearchSettings":
        if self.query_seeds == 0 and self.sub_queries == 0:
            raise ValueError("no seed search: set query_seeds or sub_queries above 0")
        return self

    @model_validator(mode="after")
    def _provider_radius(self) -> "SearchSettings":
        # Two hops would fetch every neighbour's own neighbours: thousands of calls a search.
        if self.source != "local" and self.hops == "2":
            raise ValueError(f"source {self.source} fetches a radius of 1 or 1.5: set "
                             "hops to 1 or 1.5, or source to local")
        return self


class ModelEndpoint(BaseModel):
    base_url: str | None = Field(None, description="OpenAI-compatible base URL, e.g. .../v1")
    model: str = Field("", description="Model name the endpoint serves")
    api_key: str | None = Field(None, description="Bearer token, if the endpoint needs one")
    max_concurrency: int = Field(8, ge=1, description="Requests in flight to this endpoint")
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout")
    call_deadline_s: float = Field(
        300.0, gt=0, le=86_400, allow_inf_nan=False,
        description="Longest one call may take from its first request, with its retries, "
        "their waits and the repair request; then it fails as a timeout (at most a day)"
    )
    max_retries: int = Field(4, ge=0, description="Retries on 429, 5xx and timeouts")
    backoff_base_s: float = Field(
        1.0, ge=0, description="First retry wait; doubles per retry, with jitter"
    )
    backoff_max_s: float = Field(
        60.0, ge=0, description="Longest wait between retries, also for a server's Retry-After"
    )
    max_tokens: int | None = Field(
        None, ge=1, description="Completion tokens per call; unset = the prompt's own budget"
    )
    temperature: float = Field(0.0, ge=0, description="Sampling temperature")
    frequency_penalty: float | None = Field(
        None, ge=-2, le=2, description="OpenAI frequency_penalty; unset = not sent")
    presence_penalty: float | None = Field(
        None, ge=-2, le=2, description="OpenAI presence_penalty; unset = not sent")
    response_format: Literal["none", "json_object", "json_schema", "json_object_schema"] = Field(
        "json_object",
        description="What to ask of the server: nothing, any JSON object, or the reply's schema "
        "(vLLM enforces json_schema with guided decoding; json_object_schema sends the schema "
        "inside a json_object request, the form llama.cpp servers enforce with a grammar)",
    )
    max_input_chars: int = Field(
        12_000, ge=500, description="Paper text longer than this is cut before it is sent"
    )
    usd_per_1k_prompt: float = Field(0.0, ge=0, description="Price per 1,000 prompt tokens")
    usd_per_1k_completion: float = Field(0.0, ge=0, description="Price per 1,000 completion tokens")

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


# Which encoder embeds claims for the offline entailment scorers (models/claim_encoders.py).
ClaimEncoderChoice = Literal["auto", "numpy", "onnx-int8"]
# Which scorer grounds claims where no entailment endpoint is configured (search/roles/).
EntailmentScorerChoice = Literal["cosine", "classifier"]
# Which encoder embeds the papers (`crase embed`, `crase db import`) and every query
# compared with their stored vectors (models/paper_encoders.py).
PaperEncoderChoice = Literal["numpy", "onnx-int8"]


class ModelSettings(BaseModel):
    """One endpoint per role. Prompts name their role in their header (`prompts/*.md`); the
    idea workflow's structuring prompts (facets, queries) use the planner endpoint and
    recall uses the expert endpoint."""

    planner: ModelEndpoint = Field(default_factory=ModelEndpoint, description="Plans, facets")
    claims: ModelEndpoint = Field(default_factory=ModelEndpoint, description="Claim extraction")
    entailment: ModelEndpoint = Field(default_factory=ModelEndpoint, description="Claim matrices")
    claim_encoder: ClaimEncoderChoice = Field(
        "auto",
        description="Claim encoder of the offline entailment scorer (no entailment "
        "endpoint): onnx-int8 = the packaged int8 MiniLM on ONNX Runtime (about 5x faster, "
        "scorer offline-minilm-int8-cosine), "
        "numpy = the float32 numpy MiniLM (offline-minilm-cosine, bit-for-bit repeatable), "
        "auto = onnx-int8, which fails naming what to install where its packages are "
        "missing (docs/model-roles.md)",
    )
    entailment_scorer: EntailmentScorerChoice = Field(
        "cosine",
        description="Entailment scorer where no entailment endpoint is configured: cosine = "
        "clipped cosine of the claim vectors (offline-minilm-int8-cosine or "
        "offline-minilm-cosine, per claim_encoder; similarity, not entailment); "
        "classifier = the claim-pair classifier trained on SciNLI over the int8 MiniLM "
        "claim vectors (offline-claim-pair-classifier: the probability that the cited claim "
        "entails or supports the citing one; its dev-calibrated cut is the theta to use; "
        "docs/entailment.md). Each stores its own matrices, never read as the other's",
    )
    entailment_model: Path | None = Field(
        None,
        description="Model file of the classifier entailment scorer (`crase "
        "train-entailment` writes one); unset = the shipped model",
    )
    idea_order_model: Path | None = Field(
        None,
        description="Model file of the idea workflow's learned final order, used by the "
        "offline expert (`crase train-idea-order` writes one); unset = the shipped model",
    )
    order_model: Path | None = Field(
        None,
        description="The model file of the learned order (search.order learned; `crase "
        "train-order` writes one); default: the shipped model, trained on hep-th papers "
        "published before 2003 only",
    )
    paper_encoder: PaperEncoderChoice = Field(
        "onnx-int8",
        description="Encoder of the stored paper vectors and of the queries searched against "
        "them (one encoder for both: a search refuses vectors of another): onnx-int8 = the "
        "packaged int8 MiniLM on ONNX Runtime (about 4x faster; the encoder the retrieval "
        "figures were measured with), numpy = the float32 numpy MiniLM. After a change, "
        "`crase embed` re-encodes the papers",
    )
    assessor: ModelEndpoint = Field(default_factory=ModelEndpoint, description="Abstract grades")
    neighbour_scorer: ModelEndpoint = Field(
        default_factory=ModelEndpoint, description="Citation-neighbour gate"
    )
    expert: ModelEndpoint = Field(
        default_factory=ModelEndpoint, description="Joint Top-5 ranking, recalled papers"
    )
    reporter: ModelEndpoint = Field(default_factory=ModelEndpoint, description="Report writing")
    cache_dir: Path = Field(default_factory=lambda: local_var_dir() / "model-cache",
                            description="Valid-reply cache (default var_dir/model-cache)")
    cache_enabled: bool = Field(True, description="Reuse valid replies to unchanged requests")
    remember_rejected: bool = Field(
        False, description="At temperature 0 the same request gets the same reply: remember "
                           "a reply still invalid after its repair, so a rerun records the same "
                           "failure without asking again (set for the local model)")


# The packaged instruct models `crase models serve` can serve (models/packaged_models.py).
LocalModelName = Literal["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"]


class LocalModelSettings(BaseModel):
    """The local OpenAI-compatible model server of `crase models serve` (the local-llm
    extra): llama.cpp on the CPU (or with gpu_layers on a GPU), bound to loopback, serving
    one GGUF file."""

    host: str = Field("127.0.0.1", description="Listen address (loopback: no API key is set)")
    port: int = Field(8091, ge=1, le=65535, description="HTTP port of the local model server")
    model: LocalModelName = Field(
        "qwen2.5-coder-1.5b", description="Which packaged model to serve (docs/local-model.md): "
        "qwen2.5-coder-1.5b, qwen2.5-coder-0.5b (faster) or smollm2-135m (a plumbing check)")
    model_path: Path | None = Field(
        None, description="Another GGUF file to serve instead of the packaged model")
    model_name: str | None = Field(
        None, description="The name the server answers to and the Run records; unset = the "
        "packaged model's own name (or the file's name, with model_path)")
    models_dir: Path | None = Field(
        None, description="Where the packaged models' joined files are kept; unset = "
        "var_dir/local-model/models")
    # 16,384: the expert ranking of a 15-work shortlist took 7,000 prompt tokens, and with
    # its 4,096-token reply budget and the repair turn it overflowed 8,192 on CSFCube.
    context_tokens: int = Field(16384, ge=512, description="Context window (prompt + reply)")
    threads: int = Field(2, ge=1, description="CPU threads llama.cpp computes with (the "
                         "launcher makes waiting threads sleep, so a shared machine loses "
                         "little; 1 where other work needs a core)")
    gpu_layers: int = Field(
        0, ge=-1, description="Model layers llama.cpp puts on the GPU (its --n_gpu_layers): 0 "
        "= CPU only, -1 = every layer; needs llama-cpp-python built with CUDA "
        "(`make gpu-delta-ablation` builds it)")
    start_timeout_s: float = Field(120.0, gt=0, description="Wait this long for it to answer")
    request_timeout_s: float = Field(
        600.0, gt=0, description="The roles' per-request timeout it prints: a CPU model is slow")


class ProviderSettings(BaseModel):
    semantic_scholar_url: str = Field(
        "https://api.semanticscholar.org/graph/v1", description="Semantic Scholar Graph API base"
    )
    semantic_scholar_key: str | None = Field(None, description="Optional API key")
    requests_per_second: float = Field(1.0, gt=0, description="Shared rate limit")
    timeout_s: float = Field(30.0, gt=0, description="Per-request timeout")
    max_retries: int = Field(5, ge=0, description="Retries on 429, 5xx and timeouts")
    backoff_base_s: float = Field(
        1.0, ge=0, description="First provider retry wait; doubles per retry, with jitter"
    )
    backoff_max_s: float = Field(
        60.0, ge=0, description="Longest wait between provider retries (also caps Retry-After)"
    )
    crossref_url: str = Field("https://api.crossref.org", description="Crossref REST API base")
    arxiv_url: str = Field("https://export.arxiv.org/api", description="arXiv API base")
    enabled: bool = Field(False, description="Use external providers at all")
    semantic_scholar_max_age_days: float = Field(
        30.0, ge=0, le=3650, allow_inf_nan=False,
        description="A paper's references or citations fetched from Semantic Scholar less "
        "than this many days ago are not fetched again (0: always fetch; at most 3650)"
    )
    semantic_scholar_neighbour_cap: int = Field(
        10_000, ge=1, le=10_000,
        description="Most references, and most citations, read per seed (1 to 10,000, the "
        "API's own cap); a longer list is recorded as truncated"
    )
    openalex_url: str = Field("https://api.openalex.org", description="OpenAlex API base")
    # A SecretStr: its repr and any dump of the settings print asterisks, so the key cannot
    # reach a log line, a Run or an export by accident; only the client reads its value.
    openalex_api_key: SecretStr | None = Field(
        None, description="OpenAlex API key (free at openalex.org; without one the API allows "
        "a few cents a day, for tests)")
    openalex_mailto: str | None = Field(
        None, max_length=200, description="Contact address sent with every OpenAlex request "
        "(`mailto`), as OpenAlex asks of its users")
    openalex_daily_budget_usd: float = Field(
        1.0, ge=0, le=10_000, allow_inf_nan=False,
        description="Most US dollars of OpenAlex usage a day (UTC), in the API's own prices: "
        "list and filter calls $0.10 per 1,000, searches $1 per 1,000, singletons free; "
        "1.0 is a free key's daily allowance")
    openalex_requests_per_second: float = Field(
        10.0, gt=0, le=100, description="OpenAlex request rate (the API allows 100/s)")
    openalex_per_page: int = Field(
        200, ge=1, le=200,
        description="Works per OpenAlex list page (the API reference allows 1 to 200; set "
        "100 if the API refuses 200)")
    openalex_dir: Path = Field(
        Path("var/openalex"), description="Where OpenAlex replies are cached and the day's "
        "spend is kept; default var_dir/openalex")
    openalex_neighbour_cap: int = Field(
        10_000, ge=1, le=100_000,
        description="Most works a search with source openalex fetches around its seeds "
        "(references and citing works together)")
    openalex_max_age_days: float = Field(
        30.0, ge=0, le=3650, allow_inf_nan=False,
        description="An OpenAlex reply cached less than this many days ago is used instead "
        "of asking again (0: always ask)")


class IngestSettings(BaseModel):
    batch_size: int = Field(
        10_000, ge=1, le=1_000_000,
        description="Rows per UNWIND transaction of the incremental load (1 to 1,000,000)"
    )
    batch_bytes: int = Field(
        16_000_000, ge=1_000, le=1_000_000_000,
        description="Largest parameter payload of one paper batch (bytes, 1 kB to 1 GB)"
    )
    max_line_bytes: int = Field(
        1_000_000, ge=1_000, le=1_000_000_000,
        description="An input line longer than this is rejected unread (1 kB to 1 GB)"
    )
    max_field_chars: int = Field(
        100_000, ge=100, le=100_000_000,
        description="A text field longer than this rejects its row (100 to 100,000,000)"
    )
    min_year: int = Field(1600, ge=0, le=2200,
                          description="Earliest plausible publication year (0 to 2200)")
    import_memory: str = Field(
        "2g", description="Off-heap memory `neo4j-admin database import` may use"
    )
    progress: bool = Field(True, description="Draw progress bars on stderr for long loads")


class IdeaSettings(BaseModel):
    """Budgets and gates of the idea-to-prior-work workflow. Upper bounds are the published
    limits (Idea2Prior): lowering a budget is allowed, raising it past them is not."""

    min_facets: int = Field(3, ge=1, le=7, description="Fewest technical facets asked for")
    max_facets: int = Field(7, ge=1, le=7, description="Most technical facets asked for")
    max_queries: int = Field(8, ge=1, le=30, description="Generated local search queries")
    hits_per_query: int = Field(
        40, ge=1, le=500, description="Full-text hits kept per generated query"
    )
    recall_max_papers: int = Field(
        20, ge=0, le=50, description="Titles the expert model may recall (hypotheses)"
    )
    selection_budget: int = Field(
        120, ge=1, le=2000, description="Candidates selected for abstract assessment"
    )
    protect_corroborated: int = Field(
        10, ge=0, le=2000,
        description="Selection slots reserved for candidates found by two routes (at most "
        "the largest selection_budget)"
    )
    protect_strong_rank: int = Field(
        15, ge=0, le=2000,
        description="Selection slots reserved for top-ranked full-text hits (at most the "
        "largest selection_budget)"
    )
    strong_rank_cutoff: int = Field(
        3, ge=1, le=500,
        description="A full-text hit at this rank or better counts as strong (at most the "
        "largest hits_per_query)"
    )
    protect_missing_abstract: int = Field(
        5, ge=0, le=2000,
        description="Selection slots reserved for candidates without an abstract (at most "
        "the largest selection_budget)"
    )
    neighbour_seeds: int = Field(5, ge=0, le=5, description="Seeds of the citation gate")
    neighbour_batch: int = Field(20, ge=1, le=20, description="Neighbours graded per call")
    neighbour_per_seed: int = Field(
        15, ge=0, le=15, description="Positive neighbours kept per seed (3 > 2 > 1)"
    )
    neighbour_budget: int = Field(
        50, ge=0, le=50, description="New candidates the citation gate may admit in all"
    )
    neighbour_read_limit: int = Field(
        100, ge=1, le=10_000,
        description="Neighbours read per seed and direction (newest first), 1 to 10,000"
    )
    provider_hits_per_query: int = Field(
        20, ge=1, le=100, description="Semantic Scholar search hits kept per query"
    )
    shortlist_assessed: int = Field(50, ge=1, le=50, description="Assessed works shortlisted")
    shortlist_buffer: int = Field(
        10, ge=0, le=10, description="Extra boundary or uncertain works shortlisted"
    )
    window_chars: int = Field(
        1800, ge=200, le=1800, description="Largest PDF text window sent to the expert"
    )
    windows_per_paper: int = Field(6, ge=1, le=6, description="PDF windows sent per paper")
    term_frequency_cap: int = Field(
        3, ge=1, le=100,
        description="Occurrences of one term that count when scoring a window, 1 to 100"
    )
    use_providers: bool = Field(
        True, description="Probe the external providers and use those that answer"
    )
    provider_probe_timeout_s: float = Field(
        3.0, gt=0, le=60, allow_inf_nan=False,
        description="How long an availability probe of a provider may take (at most 60 s)"
    )
    embedding_cache: bool = Field(
        True, description="Keep the offline backends' sentence vectors under var_dir"
    )
    arxiv_pdf_url: str = Field("https://arxiv.org/pdf", description="Where arXiv serves PDFs")
    pdf_timeout_s: float = Field(30.0, gt=0, le=600, allow_inf_nan=False,
                                 description="Timeout of one PDF download (at most 600 s)")
    pdf_max_bytes: int = Field(
        50_000_000, ge=1000, le=1_000_000_000,
        description="A downloaded PDF larger than this is refused (1 kB to 1 GB)"
    )


class ApiSettings(BaseModel):
    host: str = Field("127.0.0.1", description="Address the HTTP API binds to")
    port: int = Field(8000, ge=1, le=65535, description="HTTP API port")
    api_keys: list[str] = Field(default_factory=list, description="Accepted X-API-Key values")
    max_body_bytes: int = Field(10_000_000, ge=1_000, le=1_000_000_000,
                                description="Largest accepted request body (1 kB to 1 GB)")
    analyst_timeout_s: float = Field(10.0, gt=0, le=3600, allow_inf_nan=False,
                                     description="Analyst Cypher timeout (at most an hour)")
    connector_timeout_s: float = Field(
        10.0, gt=0, le=3600, allow_inf_nan=False,
        description="Time the connector (GET /connections, /ui/connect) may spend in the "
        "database per request, all its reads together; each read is a transaction the "
        "database ends when the time left runs out")
    analyst_row_limit: int = Field(1000, ge=1, le=100_000,
                                   description="Analyst Cypher row limit (1 to 100,000)")
    analyst_max_in_flight: int = Field(
        2, ge=1, le=64, description="Analyst queries in the database at once; more are "
        "answered 503 with Retry-After (keep it below the database's cores)")
    analyst_grace_s: float = Field(
        5.0, gt=0, le=600, allow_inf_nan=False, description="How long past "
        "analyst_timeout_s the HTTP API waits for the database before it answers 504")
    text_tools_max_in_flight: int = Field(
        2, ge=1, le=256,
        description="Text-tool requests (POST /code-extract, /entailment-data) in progress "
        "at once; more are answered 429 with Retry-After (1 to 256)")
    given_papers_max_in_flight: int = Field(
        2, ge=1, le=256,
        description="Requests resolving papers to start a search from (POST /searches with "
        "given_papers, the search page's box) at once; more are answered 429 (1 to 256)")
    given_papers_max_titles: int = Field(
        20, ge=1, le=100,
        description="Papers one request may name by title alone (each a full-text query); "
        "ids, arXiv ids and DOIs do not count (1 to 100)")
    citation_gaps_max_in_flight: int = Field(
        2, ge=1, le=256,
        description="POST /citation-gaps requests in progress at once; more are answered "
        "429 (1 to 256)")
    citation_gaps_max_references: int = Field(
        500, ge=1, le=5000,
        description="BibTeX entries one POST /citation-gaps resolves at most; a longer "
        "reference list is refused with the limit (1 to 5,000)")
    literature_max_in_flight: int = Field(
        2, ge=1, le=256,
        description="POST /evolution and /landscape requests in progress at once; more are "
        "answered 429 (1 to 256)")
    search_submissions_max_in_flight: int = Field(
        8, ge=1, le=256,
        description="POST /searches requests being accepted at once (their runs then wait "
        "for a search worker); more are answered 429 (1 to 256)")
    busy_retry_after_s: int = Field(
        5, ge=1, le=3600,
        description="The Retry-After of a 429 from a busy kind of work, in seconds")
    search_workers: int = Field(
        2, ge=1, le=32, description="Searches run at once by the HTTP API; more wait in a queue"
    )
    runs_in_memory: int = Field(
        1000, ge=10, le=1_000_000, description="Finished runs whose live progress the API "
        "keeps (10 to 1,000,000); the graph keeps every run"
    )
    health_timeout_s: float = Field(
        2.0, gt=0, le=60, allow_inf_nan=False,
        description="Timeout of each model endpoint probe of GET /health (at most 60 s)"
    )
    ingest_max_rows: int = Field(
        50_000, ge=1, le=10_000_000,
        description="Papers plus citations accepted in one POST /papers/batch (at most 10^7)"
    )
    key_file: Path | None = Field(
        None, description="Where `crase serve` keeps the generated key when no api_keys are "
        "set (loopback only); default var_dir/api-key"
    )
    database_retry_s: float = Field(
        5.0, gt=0, le=600, allow_inf_nan=False,
        description="How long a request retries an unreachable or busy database before it "
        "answers 503 (at most 600 s)"
    )
    run_deadline_s: float = Field(
        3600.0, gt=0, le=604_800, allow_inf_nan=False,
        description="A search or idea run of the HTTP API still going this long after it "
        "started (time queued does not count) is stopped, its model calls too, and closed "
        "'failed' (at most a week)"
    )
    max_queued_runs: int = Field(
        100, ge=0, le=100_000,
        description="Runs (searches and idea runs) that may wait for a worker at once; one "
        "more is answered 429 with Retry-After (0: a run needs a free worker)"
    )
    stale_run_after_s: float = Field(
        300.0, ge=60, le=86_400, allow_inf_nan=False,
        description="At start-up a Run left 'running' or 'queued' whose process has not "
        "beaten its heartbeat (every 30 s, crase/run_lifecycle.py) for this long is closed "
        "'failed': its owner is gone (60 s to a day)"
    )
    session_max_age_s: float = Field(
        43_200.0, gt=0, le=2_592_000, allow_inf_nan=False,
        description="How long a web login lasts (default a working day, at most 30 days)"
    )


class RunSettings(BaseModel):
    """How long recorded runs are kept (`crase runs prune`, docs/runs-and-exports.md)."""

    keep_runs: int = Field(
        1000, ge=0, le=10_000_000,
        description="`crase runs prune` keeps at least the newest this many finished runs "
        "(0 to 10,000,000); a starred or exported run is never pruned")
    keep_days: float = Field(
        90.0, ge=0, le=36_500, allow_inf_nan=False,
        description="`crase runs prune` keeps every run started less than this many days "
        "ago (0 to 36,500); a run is pruned only past both keep_runs and keep_days")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="CRASE_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    providers: ProviderSettings = Field(default_factory=ProviderSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    idea: IdeaSettings = Field(default_factory=IdeaSettings)
    local_model: LocalModelSettings = Field(default_factory=LocalModelSettings)
    runs: RunSettings = Field(default_factory=RunSettings)
    # The old names of models.order_model (CRASE_ORDER_MODEL, CRASE_RANKER_MODEL), read
    # until the next release: the environment source reads declared fields only, so the old
    # names stay declared here; the validator below moves their values.
    order_model: Path | None = Field(None, description="Deprecated: use models.order_model")
    ranker_model: Path | None = Field(None, description="Deprecated: use models.order_model")
    var_dir: Path = Field(default_factory=local_var_dir,
                          description="Local state: runs, rejects, caches, the server home")
    sample_corpus: Path = Field(default_factory=lambda: Path.cwd() / "data" / "sample",
                                description="Corpus a benchmark reads when none is given")

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        return renamed_settings(data, RENAMED_SETTINGS, "")

    @model_validator(mode="after")
    def _follow_var_dir(self) -> "Settings":
        """Paths left at their default live under var_dir, wherever var_dir is."""
        if "home" not in self.database.model_fields_set:
            self.database.home = self.var_dir / "neo4j"
        if "cache_dir" not in self.models.model_fields_set:
            self.models.cache_dir = self.var_dir / "model-cache"
        if "openalex_dir" not in self.providers.model_fields_set:
            self.providers.openalex_dir = self.var_dir / "openalex"
        return self


def setting(model: type[BaseModel], name: str) -> Any:
    """A field of a settings model (type bounds, default, description), to declare again
    in a RequestParams model, so that the settings stay the one source of a parameter."""
    return copy(model.model_fields[name])


class RequestParams(BaseModel):
    """What one HTTP request may set of a settings model: the fields a subclass declares
    with `setting(...)`, nothing else. Provider addresses and switches, size caps and
    timeouts are the operator's; a request naming one is told so, and where it is set."""

    model_config = ConfigDict(extra="forbid")
    settings_model: ClassVar[type[BaseModel]]
    settings_prefix: ClassVar[str]  # of the environment variables, e.g. CRASE_IDEA__

    @classmethod
    def operator_settings(cls) -> dict[str, str]:
        """Each setting a request may not give, with the variable the operator sets it by."""
        kept = {name: f"{cls.settings_prefix}{name.upper()}"
                for name in cls.settings_model.model_fields if name not in cls.model_fields}
        return kept | {name: f"CRASE_PROVIDERS__{name.upper()}"
                       for name in ProviderSettings.model_fields}

    @model_validator(mode="before")
    @classmethod
    def _refuse_operator_settings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kept = cls.operator_settings()
        named = [f"{name} is this server's own setting ({kept[name]}), not a request's"
                 for name in data if name in kept]
        if named:
            raise PydanticCustomError("operator_setting", "{problems}",
                                      {"problems": "; ".join(named)})
        return data


def request_fields(model: type[BaseModel]) -> type[RequestParams]:
    """A RequestParams base holding every field of a settings model as the model declares
    it, for a request model whose every field is a run parameter: a field added to the
    settings is a request's parameter with no second line to write."""
    fields: dict[str, Any] = {name: (field.annotation, setting(model, name))
                              for name, field in model.model_fields.items()}
    return create_model(f"{model.__name__}Fields", __base__=RequestParams, **fields)
