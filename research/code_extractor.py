"""Code Extractor: code and pseudocode blocks in a paper (PDF, Markdown or plain text) found
by rules, and diagnostics of how completely the paper specifies its implementation.

The rules, in order (a line claimed by one is not looked at by the next):

1. fenced blocks (```lang ... ``` or ~~~) in Markdown and text: code, or pseudocode when the
   fence says `pseudocode`, `algorithm` or `pseudo`;
2. "Algorithm N" / "Procedure N" headings: the heading and the pseudocode-like lines after
   it (Input/Output/Require/Ensure, for/while/if/return/end, numbered steps, arrows);
3. runs of at least three code-like lines (def/class/import, assignments, calls, braces,
   statements ending in `;`) with at least one unmistakable one (def, class, import, a
   block header ending in `:`, return).

The diagnostics name the frameworks and dependencies the text and code use (whether each
dependency is installed where this runs, answered from what is on disk: nothing the text
names is ever imported), terms of model structure, and for each of four
components (training loop, preprocessing, hyperparameters, evaluation) whether it is in
code, only described in prose, or missing. Without a model every score is a heuristic of
stated rules and says so; with a model endpoint (role `expert`) its analysis is added,
labelled with the model, next to the heuristic one. Neither a parse, a syntax check nor a
score shows that a paper can be reproduced.

Code is never executed unless the caller asks (`execute=True`); then each Python block that
parses runs in its own subprocess, contained as crase.research.code_runner says (an empty
environment, a temporary folder, resource limits, its own namespaces and cgroup where the
host allows them), and is killed with everything it started at the timeout.
"""

import ast
import functools
import importlib.machinery
import importlib.metadata
import re
import sys
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from crase.errors import DocumentUnreadable, ModelNotConfigured, PdfError
from crase.graph import Graph
from crase.ingest.pdf_text import is_section_heading, read_pdf
from crase.models.chat import ModelCall, ModelFailure, ModelRunner, endpoint_for
from crase.prompts.catalog import data_block, load_prompt
from crase.research.code_runner import run_python
from crase.run_lifecycle import RunLifecycle
from crase.settings import ModelEndpoint, ModelSettings
from crase.text_limits import (
    CpuDeadline,
    LinearMatch,
    LinearPattern,
    check_text_size,
    compile_linear,
    text_pieces,
)
from crase.usage import Usage
from crase.user_files import check_user_file, read_user_text

BlockKind = Literal["code", "pseudocode"]
DocumentKind = Literal["pdf", "markdown", "text"]
SUFFIXES: dict[str, DocumentKind] = {".pdf": "pdf", ".md": "markdown", ".markdown": "markdown",
                                     ".txt": "text", ".text": "text"}
STAGES = ("extract", "diagnose", "execute", "report")
MIN_CODE_LINES = 3
MAX_PSEUDOCODE_LINES = 60
MAX_MODEL_DOCUMENT_CHARS = 24_000  # the paper's text sent to the model, from its start
MODEL_ROLE = "expert"
# User text is hostile: the document's size is bounded, a line longer than a listing's is
# not looked at by the line rules, every pattern runs on RE2 (crase.text_limits: linear time,
# whatever the text), and the rules and the diagnostics each check a CPU deadline at every
# line or piece they look at.
MAX_DOCUMENT_CHARS = 2_000_000
MAX_PDF_BYTES = 64_000_000  # a PDF file named on the command line, checked before it is opened
MAX_CODE_LINE_CHARS = 2_000
MAX_SYNTAX_CHECK_CHARS = 20_000
PARSE_CPU_S = 5.0

FENCE = compile_linear(r"^\s*(```|~~~)\s*([\w+#.-]*)\s*$")
PSEUDO_FENCES = {"pseudocode", "pseudo", "algorithm", "algo"}
ALGORITHM_HEADING = compile_linear(r"^\s*(Algorithm|Procedure)\s+\d+\b", re.IGNORECASE)
PSEUDO_LINE = compile_linear(
    r"^\s*(\d+[:.)]\s*)?(input|output|require|ensure|initiali[sz]e|for|foreach|while|repeat|"
    r"until|if|else|elif|end|return|function|procedure|do|then|let|set|compute|update|"
    r"sample|draw|parameters?)\b|←|<-|:=", re.IGNORECASE)
STRONG_CODE = compile_linear(
    r"^\s*((def|class)\s+\w+\s*[(:]|import\s+[\w.]+|from\s+[\w.]+\s+import\s|return\b|"
    r"(if|elif|while|for|with|try|except|else|finally)\b.*:\s*$|#include\b)")
# What a line of code looks like, one form a line.
CODE_LINE_FORMS = (
    r"(def|class)\s+\w+\s*[(:]",
    r"import\s+[\w.]+", r"from\s+[\w.]+\s+import\s",
    r"(return|yield|raise|assert|print)\b",
    r"(if|elif|while|for|with|try|except|else|finally)\b.*:\s*$",
    r"@\w[\w.]*(\(.*\))?\s*$",
    r"[\w.\[\]]+(\s*,\s*[\w.\[\]]+)*\s*(=|\+=|-=|\*=|/=)\s*[^=\s].*",
    r"[\w.]+\(.*\)\s*;?\s*$",
    r"[{}()\[\]]+\s*;?\s*$",
    r"#include\b",
    r"(int|float|double|void|auto|let|const|var|function)\s+\w.*[;{]\s*$",
    r"\w.*\)\s*;\s*$",
)
CODE_LINE = compile_linear(r"^\s*(" + "|".join(CODE_LINE_FORMS) + ")")
PSEUDO_IO = compile_linear(r"\b(input|output|require|ensure)\b", re.IGNORECASE)
# [ \t] rather than \s: a \s* at a line start would run over every blank line after it.
PYTHON_HINT = compile_linear(
    r"^[ \t]*(def |class |import |from \S+ import |print\(|elif |return\b)|:[ \t]*$",
    re.MULTILINE)
IMPORT_NAME = compile_linear(r"^[ \t]*import[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
FROM_IMPORT_NAME = compile_linear(r"^[ \t]*from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b",
                                  re.MULTILINE)
PIP_INSTALL_NAME = compile_linear(r"\bpip3? install\s+([A-Za-z][\w.-]*)")
DISTRIBUTION_SEPARATORS = compile_linear(r"[-_.]+")

FRAMEWORKS: dict[str, str] = {
    "PyTorch": r"\bimport torch\b|\btorch\.\w|\bPyTorch\b",
    "TensorFlow": r"\bimport tensorflow\b|\btf\.\w+\(|\bTensorFlow\b",
    "JAX": r"\bimport jax\b|\bjax\.\w|\bJAX\b|\bFlax\b",
    "Keras": r"\bkeras\b|\bKeras\b",
    "scikit-learn": r"\bsklearn\b|\bscikit-learn\b",
    "Hugging Face Transformers": r"\bfrom transformers import\b|\bHugging ?Face\b",
    "NumPy": r"\bimport numpy\b|\bnp\.\w+\(|\bNumPy\b",
    "MXNet": r"\bmxnet\b|\bMXNet\b",
}
STRUCTURE_TERMS: dict[str, str] = {
    "layers": r"\b\d+[- ]layers?\b|\bnum_layers\b|\bn_layers\b",
    "hidden size": r"\bhidden (size|dimension|units)\b|\bhidden_(size|dim)\b",
    "attention heads": r"\b(attention )?heads\b|\bnum_heads\b|\bmulti-head\b",
    "encoder-decoder": r"\bencoder\b|\bdecoder\b",
    "transformer": r"\btransformer\b",
    "convolution": r"\bconvolution(al)?\b|\bnn\.Conv[123]d\b|\bConv2D\b",
    "recurrent": r"\bLSTM\b|\bGRU\b|\bRNN\b",
    "feed-forward": r"\bMLP\b|\bfeed-?forward\b|\bnn\.Linear\b|\bDense\(",
    "residual": r"\bresidual\b|\bskip connections?\b",
    "embedding": r"\bembedding (size|dimension)\b|\bnn\.Embedding\b",
    "normalization": r"\blayer ?norm(alization)?\b|\bbatch ?norm(alization)?\b|\bLayerNorm\b",
}
# Each component: what shows it in code, and what shows it described in prose.
COMPONENTS: dict[str, tuple[str, str]] = {
    "training loop": (
        r"\bfor\s+epoch\b|\.backward\(|optimi[sz]er\.step\(|\.fit\(|\btrain_step\b",
        r"\btrain(ed|ing)?\b[^.\n]{0,40}\b\d+\s+epochs\b|\btraining (loop|procedure)\b|"
        r"\boptimi[sz]ed? (with|using)\b|\b(Adam|SGD|AdamW)\b"),
    "preprocessing": (
        r"\btokeni[sz]e|\bnormali[sz]e|\btransforms\.|\bpreprocess",
        r"\bpre-?process|\btokeni[sz]|\bnormali[sz]|\baugment|\bresiz|\blower-?cas|"
        r"\bstop ?words\b"),
    "hyperparameters": (
        r"\b(lr|learning_rate|batch_size|epochs|num_epochs|dropout|weight_decay)\s*=\s*\d",
        r"\b(learning rate|batch size|dropout|weight decay|warm-?up|epochs?)\b[^.\n]{0,40}\d"),
    "evaluation": (
        r"\baccuracy\b|\bf1_score\b|\bevaluate\(|\.eval\(\)|\bmetrics?\.",
        r"\baccuracy\b|\bF1\b|\bBLEU\b|\bROUGE\b|\bprecision\b|\brecall\b|\bevaluat|"
        r"\btest set\b"),
}


@dataclass
class CodeBlock:
    kind: BlockKind
    language: str | None
    text: str
    where: str  # "page 2, lines 4-11", "lines 10-24"
    rule: str  # which rule found it
    syntax: str = "not checked"  # "ok", "error: ...", "not checked" (not Python)
    execution: dict[str, Any] = field(default_factory=lambda: {"status": "not run"})


@dataclass(frozen=True)
class Document:
    name: str
    kind: DocumentKind
    pages: list[str]  # one page for Markdown and text

    @property
    def text(self) -> str:
        return "\n".join(self.pages)


@dataclass
class Extraction:
    document: Document
    blocks: list[CodeBlock]
    diagnostics: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    model_analysis: dict[str, Any] | None = None
    run_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        document = self.document
        return {"run_id": self.run_id,
                "document": {"name": document.name, "kind": document.kind,
                             "pages": len(document.pages)},
                "blocks": [asdict(block) for block in self.blocks],
                "diagnostics": self.diagnostics, "scores": self.scores, "notes": self.notes,
                "model_analysis": self.model_analysis}


# --- reading ----------------------------------------------------------------------------


def read_document(path: Path) -> Document:
    """A PDF (PyMuPDF, page by page), Markdown or text file; DocumentUnreadable otherwise,
    UserTextTooLarge past MAX_DOCUMENT_CHARS."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DocumentUnreadable(f"{path.name}: the code extractor reads .pdf, .md and .txt "
                                 "files; convert the document to one of them")
    if kind == "pdf":
        try:
            check_user_file(path, "the document", MAX_PDF_BYTES)
            pages = read_pdf(path).pages
        except FileNotFoundError as err:
            raise DocumentUnreadable(f"{path} does not exist; give an existing file") from err
        except PdfError as err:
            raise DocumentUnreadable(f"{err}; give a PDF with a text layer, or its text as "
                                     ".txt") from err
        check_text_size("\n".join(pages), f"the text of {path.name}", MAX_DOCUMENT_CHARS)
        return Document(path.name, kind, pages)
    return Document(path.name, kind, [read_text_document(path)])


def read_text_document(path: Path) -> str:
    try:
        # UTF-8: at most 4 bytes a character.
        text = read_user_text(path, "the document", 4 * MAX_DOCUMENT_CHARS)
    except FileNotFoundError as err:
        raise DocumentUnreadable(f"{path} does not exist; give an existing file") from err
    except UnicodeDecodeError as err:
        raise DocumentUnreadable(f"{path} is not UTF-8 text; save it as UTF-8") from err
    if not text.strip():
        raise DocumentUnreadable(f"{path} is empty; give a document with text")
    check_text_size(text, path.name, MAX_DOCUMENT_CHARS)
    return text


def document_from_bytes(name: str, data: bytes) -> Document:
    """A document sent as bytes (the HTTP API): written to a temporary file and read as one."""
    suffix = Path(name).suffix.lower()
    with tempfile.TemporaryDirectory(prefix="crase-code-extract-") as folder:
        path = Path(folder) / f"document{suffix}"
        path.write_bytes(data)
        document = read_document(path)
    return Document(Path(name).name, document.kind, document.pages)


# --- the rules --------------------------------------------------------------------------


def extract_blocks(document: Document) -> list[CodeBlock]:
    """The three rules over each page; ParseDeadlineExceeded past PARSE_CPU_S."""
    deadline = CpuDeadline(PARSE_CPU_S, f"the code and pseudocode of {document.name}")
    blocks: list[CodeBlock] = []
    for number, page in enumerate(document.pages, start=1):
        prefix = f"page {number}, " if document.kind == "pdf" else ""
        lines = page.splitlines()
        taken = [False] * len(lines)
        found = fenced_blocks(lines, taken, deadline)
        found += algorithm_blocks(lines, taken, deadline)
        found += code_line_blocks(lines, taken, deadline)
        for _start, block in sorted(found, key=lambda pair: pair[0]):
            block.where = prefix + block.where
            blocks.append(block)
    for block in blocks:
        deadline.check()
        block.syntax = check_syntax(block)
    return blocks


def span(start: int, end: int) -> str:
    return f"lines {start + 1}-{end + 1}"


def fenced_blocks(lines: list[str], taken: list[bool],
                  deadline: CpuDeadline) -> list[tuple[int, CodeBlock]]:
    found = []
    index = 0
    while index < len(lines):
        deadline.check()
        opening = fence_opening(lines[index])
        if opening is None:
            index += 1
            continue
        close = closing_fence(lines, index + 1, opening.group(1), deadline)
        if close is None:
            break  # an unclosed fence: the rest is left to the other rules
        language = opening.group(2).lower() or None
        kind: BlockKind = "pseudocode" if language in PSEUDO_FENCES else "code"
        body = "\n".join(lines[index + 1:close])
        if body.strip():
            found.append((index, CodeBlock(kind, None if kind == "pseudocode" else language,
                                           body, span(index, close), "fenced block")))
        for j in range(index, close + 1):
            taken[j] = True
        index = close + 1
    return found


def fence_opening(line: str) -> LinearMatch | None:
    """The line's match of FENCE; the pattern is not run on a line without a fence
    (a call costs microseconds, and a document can have a million lines)."""
    if "```" not in line and "~~~" not in line:
        return None
    return FENCE.match(line)


def is_algorithm_heading(line: str) -> bool:
    """Whether the line matches ALGORITHM_HEADING; run only on a line that starts with
    one of its words."""
    return (line.lstrip()[:9].lower() in ("algorithm", "procedure")
            and ALGORITHM_HEADING.match(line) is not None)


def closing_fence(lines: list[str], start: int, fence: str,
                  deadline: CpuDeadline) -> int | None:
    """The index of the first line from `start` that is `fence` alone; None without one."""
    for index in range(start, len(lines)):
        deadline.check()
        if lines[index].strip() == fence:
            return index
    return None


def algorithm_blocks(lines: list[str], taken: list[bool],
                     deadline: CpuDeadline) -> list[tuple[int, CodeBlock]]:
    found = []
    for index, line in enumerate(lines):
        deadline.check()
        if taken[index] or not is_algorithm_heading(line):
            continue
        end = pseudocode_end(lines, taken, index, deadline)
        if end > index:
            for j in range(index, end + 1):
                taken[j] = True
            found.append((index, CodeBlock("pseudocode", None,
                                           "\n".join(lines[index:end + 1]), span(index, end),
                                           "Algorithm heading")))
    return found


def pseudocode_end(lines: list[str], taken: list[bool], heading: int,
                   deadline: CpuDeadline) -> int:
    """The last line of the pseudocode under an Algorithm heading: pseudocode-like lines,
    with a short line between two of them allowed (a wrapped step)."""
    end = heading
    limit = min(len(lines), heading + 1 + MAX_PSEUDOCODE_LINES)
    for j in range(heading + 1, limit):
        deadline.check()
        line = lines[j]
        if taken[j] or is_algorithm_heading(line) or is_section_heading(line):
            break
        if PSEUDO_LINE.search(line):
            end = j
        elif not line.strip() or len(line.strip()) > 70 or j == end + 2:
            break
    return end


def code_line_blocks(lines: list[str], taken: list[bool],
                     deadline: CpuDeadline) -> list[tuple[int, CodeBlock]]:
    found = []
    run: list[int] = []
    for index in [*range(len(lines)), len(lines)]:
        deadline.check()
        line = lines[index] if index < len(lines) else ""
        code_like = index < len(lines) and not taken[index] and is_code_line(line, CODE_LINE)
        if code_like:
            run.append(index)
            continue
        if line.strip() == "" and run and index < len(lines) and not taken[index]:
            continue  # a blank line inside a block
        if len(run) >= MIN_CODE_LINES and has_strong_line(lines, run, deadline):
            text = "\n".join(lines[run[0]:run[-1] + 1])
            language = "python" if any_match(PYTHON_HINT, text, deadline) else None
            found.append((run[0], CodeBlock("code", language, text, span(run[0], run[-1]),
                                            "code-like lines")))
            for j in range(run[0], run[-1] + 1):
                taken[j] = True
        run = []
    return found


def has_strong_line(lines: list[str], run: list[int], deadline: CpuDeadline) -> bool:
    """Whether one line of the run is unmistakably code (STRONG_CODE)."""
    for index in run:
        deadline.check()
        if is_code_line(lines[index], STRONG_CODE):
            return True
    return False


def any_match(pattern: LinearPattern, text: str, deadline: CpuDeadline) -> bool:
    """Whether `pattern` is found in `text`, searched piece by piece (text_pieces)."""
    for piece in text_pieces(text):
        deadline.check()
        if pattern.search(piece) is not None:
            return True
    return False


def is_code_line(line: str, pattern: LinearPattern) -> bool:
    """A line no listing has (longer than MAX_CODE_LINE_CHARS) is prose, whatever it holds;
    a blank line matches no code pattern, and is not given to one."""
    return (len(line) <= MAX_CODE_LINE_CHARS and not line.isspace() and line != ""
            and pattern.match(line) is not None)


def check_syntax(block: CodeBlock) -> str:
    """Python blocks are parsed (never run): 'ok' or the parser's error. A block longer
    than MAX_SYNTAX_CHECK_CHARS is not parsed: the parse is one call that holds the
    interpreter (two megabytes of code took seconds)."""
    if block.kind != "code" or block.language not in ("python", "py", "python3"):
        return "not checked"
    if len(block.text) > MAX_SYNTAX_CHECK_CHARS:
        return f"not checked (longer than {MAX_SYNTAX_CHECK_CHARS:,} characters)"
    try:
        ast.parse(block.text)
    except SyntaxError as err:
        return f"error: {err.msg} (line {err.lineno})"
    except (RecursionError, MemoryError):
        # How the parser reports nesting past its stack (`-` * 20000 + `1`), not a lack
        # of memory in the process.
        return "error: nested too deeply for the parser"
    return "ok"


# --- diagnostics ------------------------------------------------------------------------


class TextScan:
    """Patterns searched over a document piece by piece (text_pieces), so that no single
    regex call holds the interpreter for long, with the diagnostics' CPU deadline checked
    between pieces."""

    def __init__(self, deadline: CpuDeadline) -> None:
        self.deadline = deadline

    def first(self, rule: str, text: str, flags: int = 0) -> tuple[str, LinearMatch] | None:
        """The first match and the piece of `text` it is in."""
        pattern = compile_linear(rule, flags)
        for piece in text_pieces(text):
            self.deadline.check()
            match = pattern.search(piece)
            if match is not None:
                return piece, match
        return None

    def found(self, rule: str, text: str, flags: int = 0) -> bool:
        return self.first(rule, text, flags) is not None

    def findall(self, pattern: LinearPattern, text: str) -> set[str]:
        found: set[str] = set()
        for piece in text_pieces(text):
            self.deadline.check()
            found.update(pattern.findall(piece))
        return found

    def snippet(self, text: str, rule: str, width: int = 60) -> str:
        """The first match with `width` characters either side, on one line."""
        hit = self.first(rule, text, re.IGNORECASE)
        if hit is None:
            return ""
        piece, match = hit
        start, end = max(0, match.start() - width), min(len(piece), match.end() + width)
        return " ".join(piece[start:end].split())


def diagnose(document: Document, blocks: Sequence[CodeBlock]) -> dict[str, Any]:
    """Frameworks, dependencies, model structure and components; ParseDeadlineExceeded
    past PARSE_CPU_S."""
    scan = TextScan(CpuDeadline(PARSE_CPU_S, f"the diagnostics of {document.name}"))
    code = "\n".join(b.text for b in blocks if b.kind == "code")
    prose = document.text
    frameworks = [{"name": name, "in_code": scan.found(rule, code),
                   "in_text": scan.found(rule, prose)} for name, rule in FRAMEWORKS.items()]
    return {
        "frameworks": [f for f in frameworks if f["in_code"] or f["in_text"]],
        "dependencies": dependencies(code, prose, scan),
        "model_structure": [{"term": term, "evidence": scan.snippet(prose, rule)}
                            for term, rule in STRUCTURE_TERMS.items()
                            if scan.found(rule, prose, re.IGNORECASE)],
        "components": {name: component_status(scan, code, prose, in_code, in_text)
                       for name, (in_code, in_text) in COMPONENTS.items()},
    }


def component_status(scan: TextScan, code: str, prose: str, in_code: str,
                     in_text: str) -> dict[str, Any]:
    if code and scan.found(in_code, code):
        return {"status": "in code", "evidence": scan.snippet(code, in_code)}
    if scan.found(in_text, prose, re.IGNORECASE):
        return {"status": "described", "evidence": scan.snippet(prose, in_text)}
    return {"status": "missing", "evidence": ""}


def dependencies(code: str, prose: str, scan: TextScan | None = None) -> list[dict[str, Any]]:
    """Top-level modules the code imports and packages the text says to install, each with
    whether it is in the standard library and whether it is installed here
    (`importable_here`): a module found on the path, a distribution whose metadata is on
    disk. Nothing named is imported."""
    scan = scan or TextScan(CpuDeadline(PARSE_CPU_S, "the dependencies"))
    names = scan.findall(IMPORT_NAME, code) | scan.findall(FROM_IMPORT_NAME, code)
    installs = scan.findall(PIP_INSTALL_NAME, prose)
    rows = []
    for name in sorted(names | installs):
        scan.deadline.check()
        source = "import" if name in names else "pip install"
        standard = name in sys.stdlib_module_names
        here = standard or (module_found(name) if source == "import"
                            else distribution_installed(name))
        rows.append({"name": name, "source": source, "standard_library": standard,
                     "importable_here": here})
    return rows


def module_found(name: str) -> bool:
    """Whether a top-level module of this name is built in, already imported, or on the
    path, found without running any code. Only a top-level name: for a dotted one,
    find_spec imports the parent packages (`this.x` printed the Zen of Python,
    `venv.__main__.x` ran venv's command line). And only the finders that read the file
    system: `importlib.util.find_spec` also asks every finder on sys.meta_path, and
    setuptools' finder answers a question about `distutils` by importing its own copy of
    it (241 modules loaded into the server by `import distutils` in a paper's text)."""
    if not name.isidentifier():
        return False
    if name in sys.modules or name in sys.builtin_module_names:
        return True
    try:
        return importlib.machinery.PathFinder.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def distribution_installed(name: str) -> bool:
    """Whether a distribution of this name (as `pip install` takes it) is installed, from
    the metadata on disk."""
    return DISTRIBUTION_SEPARATORS.sub("-", name).lower() in installed_distributions()


@functools.cache
def installed_distributions() -> frozenset[str]:
    """The normalised names (PEP 503) of the installed distributions, read once."""
    return frozenset(DISTRIBUTION_SEPARATORS.sub("-", dist.metadata["Name"] or "").lower()
                     for dist in importlib.metadata.distributions())


def heuristic_scores(blocks: Sequence[CodeBlock],
                     components: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Three scores from stated rules, each labelled heuristic with its rule."""
    pseudo = [b for b in blocks if b.kind == "pseudocode"]
    full_pseudo = any(len(b.text.splitlines()) >= 5
                      and any(PSEUDO_IO.search(piece) for piece in text_pieces(b.text))
                      for b in pseudo)
    weights = {"in code": 1.0, "described": 0.5, "missing": 0.0}
    covered = sum(weights[c["status"]] for c in components.values()) / len(components)
    described = all(c["status"] != "missing" for c in components.values())
    has_code = any(b.kind == "code" for b in blocks)
    level = 3 if has_code and described else 2 if (has_code or pseudo or covered >= 0.5) else 1
    return {
        "pseudocode_completeness": {
            "value": 2 if full_pseudo else 1 if pseudo else 0, "scale": "0-2",
            "basis": "heuristic",
            "rule": "2: a pseudocode block with inputs/outputs and at least 4 steps; "
                    "1: pseudocode without them; 0: none"},
        "implementation_completeness": {
            "value": round(covered, 3), "scale": "0-1", "basis": "heuristic",
            "rule": "mean over training loop, preprocessing, hyperparameters and evaluation "
                    "of 1 (in code), 0.5 (described) or 0 (missing)"},
        "reproducibility_level": {
            "value": level, "scale": "1-3", "basis": "heuristic",
            "rule": "3: code and every component at least described; 2: code, pseudocode or "
                    "half the components; 1: otherwise"},
    }


# --- execution (only on request) ---------------------------------------------------------


def execute_block(block: CodeBlock, timeout_s: float) -> dict[str, Any]:
    """Run one Python block contained (crase.research.code_runner: an empty environment, a
    temporary folder, limits, its own namespaces and cgroup where the host allows them),
    killed with all it started at the timeout; what it printed (the end of it), how it
    ended, and what containment applied."""
    if block.syntax != "ok":
        return {"status": "not run", "reason": f"not parsed Python ({block.syntax})"}
    return run_python(block.text, timeout_s)


# --- the whole extraction -----------------------------------------------------------------


class ModelAnalyst:
    """The model path: one `analyze_implementation` call on the expert endpoint. Its
    answer is labelled with the model; a failed call is reported, never replaced."""

    def __init__(self, endpoint: ModelEndpoint, runner: ModelRunner) -> None:
        self.endpoint = endpoint
        self.runner = runner
        self.prompt = load_prompt("analyze_implementation")
        self.spent = Usage()

    @classmethod
    def from_settings(cls, models: ModelSettings) -> "ModelAnalyst | None":
        """The analyst of the configured expert endpoint; None without one."""
        try:
            endpoint = endpoint_for(models, MODEL_ROLE)
        except ModelNotConfigured:
            return None
        return cls(endpoint, ModelRunner.from_settings(models))

    @property
    def name(self) -> str:
        return f"{self.endpoint.model} ({self.prompt.ref})"

    def analyse(self, document: Document, blocks: Sequence[CodeBlock]) -> dict[str, Any]:
        shown = [{"kind": b.kind, "language": b.language, "where": b.where, "text": b.text}
                 for b in blocks]
        call: ModelCall[Any] = ModelCall(
            self.prompt, {"document": data_block(document.text[:MAX_MODEL_DOCUMENT_CHARS]),
                          "blocks": data_block(shown)},
            subject=document.name, stage="code_extract")
        outcome = self.runner.run_one(self.endpoint, call)
        self.spent.add(outcome.usage)
        basis = f"model {self.endpoint.model}"
        if isinstance(outcome, ModelFailure):
            return {"status": "failed", "basis": basis, "prompt": self.prompt.ref,
                    "error": f"{outcome.kind}: {outcome.detail}"}
        return {"status": "done", "basis": basis, "prompt": self.prompt.ref,
                **outcome.value.model_dump()}

    def usage(self) -> dict[str, Any]:
        return {MODEL_ROLE: self.spent.to_dict()}


def extract_code(graph: Graph, document: Document, execute: bool = False,
                 timeout_s: float = 10.0, analyst: "ModelAnalyst | None" = None,
                 run_id: str | None = None) -> Extraction:
    """Blocks, diagnostics and heuristic scores, the model's analysis when an analyst is
    given, and execution only when `execute`; recorded as a `code_extract` run."""
    run_id = run_id or uuid.uuid4().hex[:12]
    backends = {"analysis": analyst.name if analyst else "heuristic (no model endpoint)"}
    params = {"document": document.name, "kind": document.kind, "execute": execute,
              "timeout_s": timeout_s}
    with RunLifecycle.open(graph, run_id, "code_extract", document.name, params, backends,
                           STAGES) as run:
        with run.stage("extract"):
            blocks = extract_blocks(document)
        with run.stage("diagnose"):
            diagnostics = diagnose(document, blocks)
            result = Extraction(document, blocks, diagnostics,
                                heuristic_scores(blocks, diagnostics["components"]),
                                run_id=run_id)
            if analyst is not None:
                result.model_analysis = analyst.analyse(document, blocks)
        if execute:
            with run.stage("execute"):
                for block in blocks:
                    if block.kind == "code":
                        block.execution = execute_block(block, timeout_s)
        with run.stage("report"):
            result.notes = extraction_notes(document, execute, analyst)
        run.counts = extraction_counts(result)
        if analyst is not None:
            run.usage = analyst.usage
    return result


def extraction_notes(document: Document, execute: bool,
                     analyst: "ModelAnalyst | None") -> list[str]:
    notes = ["The scores marked heuristic come from stated rules over the text and the "
             "blocks; no score shows that the paper can be reproduced."]
    if analyst is None:
        notes.append("No model endpoint is configured (role expert): only the heuristic "
                     "analysis ran.")
    if not execute:
        notes.append("No code was executed (execution was not asked for).")
    else:
        notes.append("Executed blocks ran contained (an empty environment, a temporary "
                     "folder, resource limits, their own namespaces and cgroup where the host "
                     "allows them) but as this user: each block's containment says what "
                     "applied.")
    if document.kind == "pdf":
        notes.append("PDF text keeps no indentation, so Python blocks from a PDF often fail "
                     "the syntax check although the paper's code may be valid.")
    return notes


def extraction_counts(result: Extraction) -> dict[str, Any]:
    blocks = result.blocks
    runs = [b.execution["status"] for b in blocks if b.execution["status"] != "not run"]
    missing = [name for name, c in result.diagnostics["components"].items()
               if c["status"] == "missing"]
    return {"code_blocks": sum(1 for b in blocks if b.kind == "code"),
            "pseudocode_blocks": sum(1 for b in blocks if b.kind == "pseudocode"),
            "syntax_ok": sum(1 for b in blocks if b.syntax == "ok"),
            "executed": len(runs), "execution_ok": runs.count("ok"),
            "timed_out": runs.count("timed out"), "missing_components": missing}


def report_markdown(result: Extraction) -> str:
    """The extraction as a Markdown report: scores with their basis, diagnostics, blocks."""
    doc, d = result.document, result.diagnostics
    lines = [f"# Implementation diagnostics: {doc.name}", "",
             f"{doc.kind} document, {len(doc.pages)} page(s); {len(result.blocks)} blocks "
             "found by rules.", "", "## Scores", "", "| score | value | basis | rule |",
             "| --- | ---: | --- | --- |"]
    lines += [f"| {name} | {s['value']} ({s['scale']}) | {s['basis']} | {s['rule']} |"
              for name, s in result.scores.items()]
    lines += ["", "## Components", "", "| component | status | evidence |", "| --- | --- | --- |"]
    lines += [f"| {name} | {c['status']} | {cell(c['evidence']) or '-'} |"
              for name, c in d["components"].items()]
    frameworks = ", ".join(
        f"{f['name']} ({'code' if f['in_code'] else 'text'})" for f in d["frameworks"])
    lines += ["", "## Frameworks and dependencies", "", f"Frameworks: {frameworks or 'none found'}"]
    lines += ["", "| dependency | from | standard library | importable here |",
              "| --- | --- | --- | --- |"]
    lines += [f"| {x['name']} | {x['source']} | {yes(x['standard_library'])} | "
              f"{yes(x['importable_here'])} |" for x in d["dependencies"]]
    structure = "; ".join(f"{m['term']}: \"{m['evidence']}\"" for m in d["model_structure"])
    lines += ["", "## Model structure", "", structure or "No structure terms found."]
    lines += model_section(result.model_analysis)
    lines += ["", "## Blocks"]
    for number, block in enumerate(result.blocks, start=1):
        run = block.execution
        ran = run["status"] if run["status"] == "not run" else (
            f"{run['status']} (exit {run['returncode']}, {run['seconds']} s; "
            f"{containment_line(run['containment'])})")
        lines += ["", f"### {number}. {block.kind} ({block.language or 'unknown language'}), "
                      f"{block.where}", "",
                  f"Found by: {block.rule}. Syntax: {block.syntax}. Execution: {ran}.", "",
                  "```" + (block.language or ""), block.text, "```"]
    lines += ["", "## Notes", ""] + [f"- {note}" for note in result.notes]
    return "\n".join(lines) + "\n"


def containment_line(containment: dict[str, Any]) -> str:
    notes = "".join(f"; {note}" for note in containment["notes"])
    return f"namespaces: {containment['namespaces']}; killed by {containment['kill']}{notes}"


def cell(text: str) -> str:
    """Text that stays inside one Markdown table cell."""
    return text.replace("|", "\\|")


def yes(flag: bool) -> str:
    return "yes" if flag else "no"


def model_section(analysis: dict[str, Any] | None) -> list[str]:
    if analysis is None:
        return []
    lines = ["", f"## Model analysis ({analysis['basis']}, {analysis['prompt']})", ""]
    if analysis["status"] != "done":
        return [*lines, f"The model analysis failed: {analysis['error']}. The heuristic "
                        "analysis above stands alone."]
    missing = "; ".join(f"{m['component']}: {m['detail']}" for m in analysis["missing_components"])
    return [*lines,
            f"- Pseudocode completeness: {analysis['pseudocode_completeness']} (0-2, model)",
            f"- Reproducibility level: {analysis['reproducibility_level']} (1-3, model)",
            f"- Frameworks: {', '.join(analysis['frameworks']) or 'none'}",
            f"- Dependencies: {', '.join(analysis['dependencies']) or 'none'}",
            f"- Model structure: {'; '.join(analysis['model_structure']) or 'none stated'}",
            f"- Missing: {missing or 'nothing named'}", f"- Notes: {analysis['notes']}"]
