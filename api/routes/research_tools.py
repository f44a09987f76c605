"""The research tools over HTTP, each call recorded as a Run of its own kind:

- POST /code-extract: code, pseudocode and implementation diagnostics of one document sent
  in the body (Markdown or text as `text`, a PDF as `pdf_base64`). Nothing sent here is
  ever executed: running a paper's code is for the command line (`--execute`) only.
- POST /validation/exports: a blinded sample of evidence-graph edges for annotators; the
  answer key stays on the server (var_dir/validation/<run id>/key.json).
  POST /validation/{export_id}/labels: one annotator's labels.
  POST /validation/{export_id}/report: the agreement measures.
- POST /entailment-data: SciNLI / MSciNLI pairs as score_entailment chat examples.
"""

import base64
import binascii
import re
import uuid
from pathlib import Path
from typing import Any, Literal

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from crase.api.bulkheads import Bulkheads
from crase.api.run_views import evidence_graph, read_run_record
from crase.errors import DocumentUnreadable, RunNotFound
from crase.graph import Graph
from crase.research.code_extractor import (
    MAX_DOCUMENT_CHARS,
    Document,
    ModelAnalyst,
    document_from_bytes,
    extract_code,
    report_markdown,
)
from crase.research.edge_validation import (
    ANNOTATOR_NAME,
    KEY_FILE,
    SampleRequest,
    corpus_source,
    export_validation_sample,
    record_labels,
    report_validation,
    run_source,
)
from crase.research.entailment_data import convert_posted_pairs
from crase.scoring.agreement import AgreementReport
from crase.settings import Settings

EXPORT_ID = r"^[0-9a-f]{12}$"


# --- code extractor ---------------------------------------------------------------------


class CodeExtractBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filename: str = Field(min_length=1, max_length=300, pattern=r"(?i)\.(pdf|md|markdown|txt)$",
                          description="The document's name; its suffix says how to read it")
    text: str | None = Field(None, max_length=MAX_DOCUMENT_CHARS,
                             description="The text of a Markdown or text document")
    pdf_base64: str | None = Field(None, max_length=4 * MAX_DOCUMENT_CHARS // 3 + 4,
                                   description="A PDF's bytes, base64-encoded")
    use_model: bool = Field(True, description="Add the model analysis when the server has an "
                                              "expert endpoint")

    @model_validator(mode="after")
    def exactly_one_content(self) -> "CodeExtractBody":
        if (self.text is None) == (self.pdf_base64 is None):
            raise PydanticCustomError("one_content", "send exactly one of text (Markdown or "
                                      "text) and pdf_base64 (a PDF)")
        return self


class BlockOut(BaseModel):
    kind: Literal["code", "pseudocode"]
    language: str | None
    text: str
    where: str = Field(description="Page and lines the block spans")
    rule: str = Field(description="The rule that found it")
    syntax: str = Field(description="ok, error: ..., or not checked (not Python)")
    execution: dict[str, Any] = Field(description="Always {'status': 'not run'} over HTTP")


class ScoreOut(BaseModel):
    value: float
    scale: str
    basis: str = Field(description="heuristic: from the stated rule; no model was asked")
    rule: str


class CodeExtractResult(BaseModel):
    run_id: str
    document: dict[str, Any]
    blocks: list[BlockOut]
    diagnostics: dict[str, Any] = Field(description="frameworks, dependencies, "
                                                    "model_structure, components")
    scores: dict[str, ScoreOut]
    notes: list[str]
    model_analysis: dict[str, Any] | None = Field(
        description="The model's analysis, labelled with the model; null without an endpoint")
    report_markdown: str


def document_of(body: CodeExtractBody) -> Document:
    if body.text is not None:
        if body.filename.lower().endswith(".pdf"):
            raise DocumentUnreadable("a .pdf file goes in pdf_base64, not in text")
        return document_from_bytes(body.filename, body.text.encode("utf-8"))
    try:
        data = base64.b64decode(body.pdf_base64 or "", validate=True)
    except (binascii.Error, ValueError) as err:
        raise DocumentUnreadable("pdf_base64 is not base64; encode the PDF's bytes") from err
    if not body.filename.lower().endswith(".pdf"):
        raise DocumentUnreadable("pdf_base64 carries a PDF: name the file <name>.pdf")
    return document_from_bytes(body.filename, data)


# --- human validation ---------------------------------------------------------------------


class ValidationExportBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Literal["run", "corpus"] = Field(description="A search run's evidence graph, or "
                                                         "every edge one scorer scored")
    run_id: str | None = Field(None, max_length=100, description="With source run")
    scorer: str | None = Field(None, max_length=300, description="With source corpus: "
                                                                 "NAME@VERSION")
    extractor: str | None = Field(None, max_length=300, description="With source corpus")
    theta: float | None = Field(None, ge=0, le=1, description="With source corpus")
    tau: float | None = Field(None, ge=0, le=1, description="With source corpus")
    edges: int = Field(50, ge=1, le=10_000, description="Edges in the sample")
    retained_share: float = Field(0.5, ge=0, le=1, description="Share of retained edges")
    annotators: list[str] = Field(default_factory=lambda: ["A", "B", "C"], min_length=2,
                                  max_length=50)
    seed: int = Field(0, ge=0, le=2**31)

    @model_validator(mode="after")
    def run_id_with_run(self) -> "ValidationExportBody":
        if (self.source == "run") != (self.run_id is not None):
            raise PydanticCustomError("run_id", "give run_id with source run, and only then")
        return self


class ClaimSide(BaseModel):
    id: str
    title: str
    year: int | None
    claims: list[str]


class ValidationItem(BaseModel):
    item_id: str
    citing: ClaimSide
    cited: ClaimSide


class ValidationExport(BaseModel):
    run_id: str = Field(description="The export's id: labels and the report go under it")
    counts: dict[str, int]
    items: list[ValidationItem] = Field(description="Blinded: no Delta, no decision")
    labels_url: str
    report_url: str


class LabelsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    annotator: str = Field(pattern=ANNOTATOR_NAME.pattern)
    labels: dict[str, str] = Field(description="item_id -> retain or prune, for every item",
                                   max_length=10_000)


class LabelsImported(BaseModel):
    run_id: str
    imported: list[str]
    annotators: list[str]
    items: int


class ValidationReport(BaseModel):
    run_id: str
    export_run_id: str | None
    source: dict[str, Any]
    annotators: list[str]
    measures: AgreementReport  # the dataclass of scoring/agreement.py, as it is
    items: list[dict[str, Any]] = Field(description="Per item: edge, Delta, Crase's decision, "
                                                    "the labels and their majority")


def export_folder(settings: Settings, export_id: str) -> Path:
    folder = settings.var_dir / "validation" / export_id
    if not (folder / KEY_FILE).is_file():
        raise RunNotFound(f"no validation export {export_id!r} on this server")
    return folder


# --- entailment data ----------------------------------------------------------------------


class NliPair(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(None, max_length=200)
    sentence1: str = Field(max_length=5000, description="The premise")
    sentence2: str = Field(max_length=5000, description="The hypothesis")
    label: str = Field(max_length=50, description="entailment, reasoning, contrasting or "
                                                  "neutral; another is a reject")
    domain: str | None = Field(None, max_length=200, description="MSciNLI's domain")


class EntailmentDataBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pairs: list[NliPair] = Field(min_length=1, max_length=10_000)


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class ChatExample(BaseModel):
    messages: list[ChatMessage]
    meta: dict[str, Any]


class EntailmentData(BaseModel):
    run_id: str
    counts: dict[str, Any]
    examples: list[ChatExample]
    rejects: list[dict[str, Any]] = Field(description="Row number (from 1) and reason")


class ResearchToolsController(Controller):
    tags = ["research"]

    @post("/code-extract", status_code=200, sync_to_thread=True,
          summary="Code, pseudocode and implementation diagnostics of one document")
    def code_extract(self, data: JSONBody[CodeExtractBody], graph: NamedDependency[Graph],
                     settings: NamedDependency[Settings],
                     bulkheads: NamedDependency[Bulkheads]) -> CodeExtractResult:
        with bulkheads.slot("text_tools"):
            document = document_of(data)
            analyst = ModelAnalyst.from_settings(settings.models) if data.use_model else None
            result = extract_code(graph, document, execute=False, analyst=analyst)
        return CodeExtractResult.model_validate(
            {**result.to_dict(), "report_markdown": report_markdown(result)})

    @post("/validation/exports", status_code=201, sync_to_thread=True,
          summary="A blinded sample of retained and pruned edges for annotators")
    def export_sample(self, data: JSONBody[ValidationExportBody],
                      graph: NamedDependency[Graph],
                      settings: NamedDependency[Settings]) -> ValidationExport:
        if data.run_id is not None:
            source = run_source(evidence_graph(graph, data.run_id, None),
                                read_run_record(graph, data.run_id) or {"backends": {}})
        else:
            source = corpus_source(
                graph, settings.search.theta if data.theta is None else data.theta,
                settings.search.tau if data.tau is None else data.tau, data.scorer,
                data.extractor)
        request = SampleRequest(data.edges, data.retained_share, tuple(data.annotators),
                                data.seed)
        run_id = uuid.uuid4().hex[:12]
        result = export_validation_sample(graph, source, request,
                                          settings.var_dir / "validation" / run_id, run_id)
        return ValidationExport(run_id=run_id, counts=result.counts,
                                items=[ValidationItem.model_validate(i) for i in result.items],
                                labels_url=f"/validation/{run_id}/labels",
                                report_url=f"/validation/{run_id}/report")

    @post("/validation/{export_id:str}/labels", status_code=200, sync_to_thread=True,
          summary="One annotator's labels for a validation export")
    def import_labels(self, export_id: FromPath[str], data: JSONBody[LabelsBody],
                      graph: NamedDependency[Graph],
                      settings: NamedDependency[Settings]) -> LabelsImported:
        folder = export_folder(settings, checked_id(export_id))
        result = record_labels(graph, folder, [(data.annotator, data.labels, "the request")])
        return LabelsImported.model_validate(result)

    @post("/validation/{export_id:str}/report", status_code=200, sync_to_thread=True,
          summary="Crase-majority agreement, precision, correctness, unanimity, Fleiss' kappa")
    def report(self, export_id: FromPath[str], graph: NamedDependency[Graph],
               settings: NamedDependency[Settings]) -> ValidationReport:
        folder = export_folder(settings, checked_id(export_id))
        return ValidationReport.model_validate(report_validation(graph, folder))

    @post("/entailment-data", status_code=200, sync_to_thread=True,
          summary="SciNLI / MSciNLI pairs as score_entailment training examples")
    def entailment_data(self, data: JSONBody[EntailmentDataBody], graph: NamedDependency[Graph],
                        bulkheads: NamedDependency[Bulkheads]) -> EntailmentData:
        rows = [pair.model_dump() for pair in data.pairs]
        with bulkheads.slot("text_tools"):
            run_id, result = convert_posted_pairs(graph, rows)
        return EntailmentData(run_id=run_id, counts=result.counts(),
                              examples=[ChatExample.model_validate(e) for e in result.examples],
                              rejects=result.rejects)


def checked_id(export_id: str) -> str:
    """An export id is the 12 hex digits of its run id; anything else names no folder."""
    if not re.match(EXPORT_ID, export_id):
        raise RunNotFound(f"no validation export {export_id!r}; export ids are 12 hex digits")
    return export_id


# Mounted by the app behind the API-key guard (api/app.py reads every routes module).
PROTECTED = [ResearchToolsController]
