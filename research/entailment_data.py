"""Training data for the entailment scorer from SciNLI / MSciNLI files.

Both data sets give sentence pairs from scientific papers, `sentence1` (the premise) and
`sentence2` (the hypothesis), with one of four relation labels: entailment, reasoning,
contrasting, neutral. SciNLI ships them as CSV (`id,sentence1,sentence2,label`) and as
JSON lines with the same keys; MSciNLI adds a `domain`. Neither can be downloaded here
(no network): the converter is tested on a small file of that layout.

Each pair becomes one chat example in exactly the shape the scorer is asked at search time
(prompts/score_entailment.md, built by the same function the model scorer uses): the
premise is the cited claim V1 (the evidence), the hypothesis the citing claim U1 (what
needs grounding), and the reply a 1 x 1 matrix with the score the label stands for in
that prompt's scale:

- entailment -> 1.0 (the cited claim entails the citing claim),
- reasoning -> 0.5 (it supports it through a short line of reasoning),
- contrasting -> 0.0 (it contradicts it), neutral -> 0.0 (unrelated).

A row that cannot become an example (an empty sentence, a label outside the four) is a
reject with its file, line and reason; every other row is converted.
"""

import csv
import io
import json
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from crase.errors import NliDataInvalid
from crase.graph import Graph
from crase.prompts.catalog import load_prompt
from crase.prompts.replies import EntailmentReply
from crase.run_lifecycle import RunLifecycle
from crase.scoring.claims import Claim
from crase.search.roles.model import entailment_call
from crase.user_files import open_user_file

Layout = Literal["auto", "csv", "tsv", "jsonl"]
LABEL_SCORES: dict[str, float] = {"entailment": 1.0, "reasoning": 0.5, "contrasting": 0.0,
                                  "neutral": 0.0}
REQUIRED = ("sentence1", "sentence2", "label")
MAX_PAIRS_FILE_BYTES = 1_000_000_000  # SciNLI's training files are 30 MB together
MAX_SENTENCE_CHARS = 20_000  # a claim; SciNLI's longest sentence has under 1,000
STAGES = ("read", "convert", "write")
SUFFIX_LAYOUTS: dict[str, Layout] = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl",
                                     ".json": "jsonl"}


@dataclass
class Conversion:
    examples: list[dict[str, Any]] = field(default_factory=list)
    rejects: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        labels = Counter(example["meta"]["label"] for example in self.examples)
        reasons = Counter(reject["reason"].split(":")[0] for reject in self.rejects)
        return {"examples": len(self.examples), "rejects": len(self.rejects),
                "labels": dict(sorted(labels.items())),
                "reject_reasons": dict(sorted(reasons.items()))}


def layout_of(path: Path, layout: Layout) -> Layout:
    if layout != "auto":
        return layout
    found = SUFFIX_LAYOUTS.get(path.suffix.lower())
    if found is None:
        raise NliDataInvalid(f"{path}: cannot tell the layout from the suffix "
                             f"{path.suffix!r}; name the file .csv, .tsv or .jsonl (`crase "
                             "entailment-data` also takes --layout)")
    return found


def read_rows(path: Path, layout: Layout = "auto") -> Iterable[tuple[int, dict[str, Any]]]:
    """(line number, row) of one file; a row that is not an object is yielded as-is for
    the converter to reject."""
    kind = layout_of(path, layout)
    try:
        with io.TextIOWrapper(open_user_file(path, "the pairs file", MAX_PAIRS_FILE_BYTES),
                              encoding="utf-8", newline="") as handle:
            if kind == "jsonl":
                yield from read_json_lines(handle)
            else:
                yield from read_table(path, handle, "\t" if kind == "tsv" else ",")
    except FileNotFoundError as err:
        raise NliDataInvalid(f"{path} does not exist; give a SciNLI / MSciNLI file") from err
    except UnicodeDecodeError as err:
        raise NliDataInvalid(f"{path} is not UTF-8 text; give the file as released") from err
    except csv.Error as err:  # a field past csv's own limit (131,072 characters), a NUL
        raise NliDataInvalid(f"{path}: not a table that can be read ({err}); give the "
                             "file as released") from err


def read_json_lines(handle: Iterable[str]) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as err:
            yield number, {"_error": f"malformed JSON: {err.msg}"}
        except RecursionError:
            yield number, {"_error": "JSON nested too deeply to read"}
        except ValueError:  # an integer past Python's int-to-str digit limit
            yield number, {"_error": "a number with more digits than Python reads"}


def read_table(path: Path, handle: Iterable[str], delimiter: str
               ) -> Iterable[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(handle, delimiter=delimiter)
    missing = [column for column in REQUIRED if column not in (reader.fieldnames or [])]
    if missing:
        raise NliDataInvalid(f"{path}: no column {', '.join(missing)} in the header "
                             f"{reader.fieldnames}; the layout is id,sentence1,sentence2,label")
    for row in reader:
        yield reader.line_num, row


def checked_pair(row: Any) -> tuple[str, str, str]:
    """(premise, hypothesis, label) of one row, or raises ValueError with the reason the
    row is refused."""
    if not isinstance(row, dict):
        raise ValueError("not_an_object: the line is not a JSON object")
    if "_error" in row:
        raise ValueError(f"malformed: {row['_error']}")
    for key in ("sentence1", "sentence2"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise ValueError(f"not_a_sentence: {key} is a {type(row[key]).__name__}, not text")
        if len(row.get(key) or "") > MAX_SENTENCE_CHARS:
            raise ValueError(f"huge_sentence: {key} has more than {MAX_SENTENCE_CHARS:,} "
                             "characters")
    premise, hypothesis = (str(row.get(k) or "").strip() for k in ("sentence1", "sentence2"))
    if not premise or not hypothesis:
        raise ValueError("empty_sentence: sentence1 and sentence2 must both have text")
    label = str(row.get("label") or "").strip().lower()
    if label not in LABEL_SCORES:
        raise ValueError(f"unknown_label: {row.get('label')!r} is not one of "
                         f"{', '.join(LABEL_SCORES)}")
    return premise, hypothesis, label


def read_labelled_pairs(path: Path, layout: Layout = "auto") -> list[tuple[str, str, str]]:
    """Every (premise, hypothesis, label) of one file; a row that is not a pair is an
    NliDataInvalid naming its line (a training set is used whole or not at all)."""
    pairs = []
    for line, row in read_rows(path, layout):
        try:
            pairs.append(checked_pair(row))
        except ValueError as err:
            raise NliDataInvalid(f"{path}, line {line}: {err}; fix or drop the row") from err
    if not pairs:
        raise NliDataInvalid(f"{path} holds no pair; give a SciNLI / MSciNLI file")
    return pairs


def convert_row(row: Any, source: str, line: int) -> dict[str, Any]:
    """One chat example, or raises ValueError with the reason the row is refused."""
    premise, hypothesis, label = checked_pair(row)
    return {"messages": chat_example(premise, hypothesis, LABEL_SCORES[label]),
            "meta": {"id": str(row.get("id") or f"{source}:{line}"), "label": label,
                     "domain": row.get("domain"), "source": source}}


def chat_example(premise: str, hypothesis: str, score: float) -> list[dict[str, str]]:
    """System, user and assistant messages: the score_entailment request for one citing
    claim (the hypothesis) and one cited claim (the premise), answered with the score."""
    # The claim type and source phrase are not part of the request; the text is.
    citing = [Claim(hypothesis, "EMPIRICAL", hypothesis)]
    cited = [Claim(premise, "EMPIRICAL", premise)]
    call = entailment_call(load_prompt("score_entailment"), citing, cited, "")
    reply = json.dumps({"matrix": [[score]]})
    EntailmentReply.model_validate_json(reply)  # the scorer must accept what it is taught
    return [*call.prompt.render(call.inputs), {"role": "assistant", "content": reply}]


def convert_rows(rows: Iterable[tuple[int, Any]], source: str,
                 into: Conversion | None = None) -> Conversion:
    result = into or Conversion()
    for line, row in rows:
        try:
            result.examples.append(convert_row(row, source, line))
        except ValueError as err:
            result.rejects.append({"file": source, "line": line, "reason": str(err)})
    return result


def convert_files(paths: Sequence[Path], layout: Layout = "auto") -> Conversion:
    result = Conversion()
    for path in paths:
        convert_rows(read_rows(path, layout), path.name, result)
    if not result.examples:
        raise NliDataInvalid(f"no usable pair in {', '.join(str(p) for p in paths)} "
                             f"({len(result.rejects)} rejects); check the files' layout")
    return result


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def build_entailment_data(graph: Graph, paths: Sequence[Path], out: Path,
                          layout: Layout = "auto", rejects_path: Path | None = None,
                          run_id: str | None = None) -> dict[str, Any]:
    """Convert the files into `out` (JSON lines of chat examples) and the rejects into
    `rejects_path` (default: next to `out`); recorded as an `entailment_data` run."""
    if not out.parent.is_dir():
        raise NliDataInvalid(f"{out.parent} is not a folder; create it or give another --out")
    run_id = run_id or uuid.uuid4().hex[:12]
    rejects_path = rejects_path or out.with_suffix(".rejects.jsonl")
    params = {"inputs": [str(p) for p in paths], "layout": layout, "out": str(out),
              "rejects": str(rejects_path), "label_scores": LABEL_SCORES}
    with RunLifecycle.open(graph, run_id, "entailment_data", ", ".join(p.name for p in paths),
                           params, {"prompt": load_prompt("score_entailment").ref},
                           STAGES) as run:
        with run.stage("read"):
            for path in paths:
                layout_of(path, layout)
        with run.stage("convert"):
            result = convert_files(paths, layout)
        with run.stage("write"):
            write_jsonl(out, result.examples)
            write_jsonl(rejects_path, result.rejects)
        run.counts = result.counts()
    return {"run_id": run_id, "out": str(out), "rejects_file": str(rejects_path),
            **result.counts()}


def convert_posted_pairs(graph: Graph, rows: Sequence[dict[str, Any]],
                         run_id: str | None = None) -> tuple[str, Conversion]:
    """Pairs sent in a request (the HTTP API) converted like a file's rows; recorded as an
    `entailment_data` run."""
    run_id = run_id or uuid.uuid4().hex[:12]
    with RunLifecycle.open(graph, run_id, "entailment_data", f"{len(rows)} posted pairs",
                           {"inputs": "request", "label_scores": LABEL_SCORES},
                           {"prompt": load_prompt("score_entailment").ref}, STAGES) as run:
        with run.stage("convert"):
            result = convert_rows(enumerate(rows, start=1), "request")
        run.counts = result.counts()
    return run_id, result
