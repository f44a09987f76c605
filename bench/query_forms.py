"""Dev query sets in the forms researchers use, made from a dev set's source papers.

    python -m crase.bench.query_forms --corpus ../shared/data/hepth
    python -m crase.bench.query_forms --corpus ../shared/data/cs768 --forms question --limit 3

A dev set's queries are a title and two abstract sentences (about 50 words). Researchers
type a few keywords, a title or a question, or start from papers they know. For each query
of `<corpus>/queries.jsonl` this writes one line per form into `<out>/<set>/<form>.jsonl`
(default out: var_dir/query-forms), with the same source paper hidden and the same
relevant set (the source's in-corpus references, the file's `relevant_ids`):

- `title`: the source paper's title alone.
- `keyphrase`: KEYPHRASE_WORDS terms of the title and abstract (keyphrase_terms: the
  terms that score highest by occurrences x in-corpus IDF, a title occurrence counting
  twice; TeX math, function words and the generic words of paper writing left out; a term
  no other paper of the corpus uses left out), in the order they first occur; how many is
  drawn from 2 to 6 with the seed.
- `seeds`: GIVEN_SEEDS of the relevant papers, drawn with the seed, as `seed_ids`, the
  rest relevant, and an empty query: a search that starts from papers alone.
- `title-seeds`: the same given papers with the title as the query.
- `sentence`: one sentence of the abstract, drawn with the seed among those long enough to
  describe an idea (search/order/training.py idea_sentences: the rule the order model's
  `idea` form is trained on), as CSFCube asks a paper's background, method or result
  sentence.
- `question`: a natural-language question (LitSearch style) written by the planner role's
  model (the local Qwen2.5 server of `crase models serve`, docs/local-model.md) from the
  abstract alone with prompts/write_search_question.md (given the title, Qwen2.5-Coder-1.5B
  put it into the question word for word, even after a repair request, for two of three
  hep-th papers; a question holding the title is still refused); each line names the model
  (`generator`) and the prompt (`prompt`, name@version). Not in the default forms: it
  needs the model server and runs once per query (minutes each on a loaded CPU); the file
  is appended to as questions arrive and a rerun asks only for the queries it lacks.

Only the dev set's source papers are read for text; the whole corpus is read only for
document frequencies. Every line keeps `form`, `from_query_id` and `generator` (a rule's
name and version, or the model); drawn forms keep the `seed`. Query ids are
`<query_id>-<form>`, so runs of several forms can share one benchmark folder. The
benchmark reads the files as they are: `crase bench quality --queries
var/query-forms/hepth/title.jsonl --out ...` (search/query_sets.py: the file format).
"""

import argparse
import json
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from crase.errors import EvaluationError
from crase.models.chat import ModelCall, ModelFailure, ModelRunner, endpoint_for
from crase.prompts.catalog import data_block, load_prompt
from crase.prompts.replies import QuestionReply, check_question
from crase.scoring.tex import plain_text
from crase.search.order.training import idea_sentences
from crase.search.query_sets import read_query_file
from crase.settings import ModelEndpoint, Settings

RULE_FORMS = ("title", "keyphrase", "seeds", "title-seeds", "sentence")
FORMS = (*RULE_FORMS, "question")
RULE_VERSION = 1  # in each rule line's `generator`: a changed rule gets a new number
GIVEN_SEEDS = 3
KEYPHRASE_WORDS = (2, 6)
QUESTION_PROMPT = "write_search_question"
# A term: letters first, then letters and digits, hyphenated parts kept together
# ("pp-wave", "n-point"); no nested repetition, so matching is linear in the text.
TERM = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# TeX math and commands: symbols ("phi", "tilde", "prod"), not words anyone types.
TEX_MATH = re.compile(r"\$[^$]*\$|\\[A-Za-z]+")
MIN_TERM_CHARS = 3
# Function words and the generic words of paper writing: nothing a researcher types to
# find a topic.
STOPWORDS = frozenset("""
about above after again against all also although among and another any are around
as at based be because been before being below between both but by can cannot could
did does doing done down during each either else even ever every for from further had
has have having here how however into its itself just many may might more most much
must near neither nor not now off once one only onto other others otherwise our ours out
over own per rather same several shall she should since some such than that the their
them then there these they this those though three through thus too two under until
upon very was way ways well were what when where whether which while who whom whose
why will with within without would yet you your
paper papers article letter note work works study studies studied studying show shows
shown showed present presents presented propose proposes proposed proposing find finds
found obtain obtains obtained consider considers considered discuss discusses discussed
describe describes described investigate investigates investigated analyze analyzes
analyzed analyse analysed give gives given provide provides provided derive derives
derived demonstrate demonstrates demonstrated introduce introduces introduced use uses
used using apply applies applied develop develops developed compute computes computed
result results new novel approach approaches method methods problem problems case cases
example examples way general simple various different certain particular particularly
first second third further recent recently previous previously known well-known
important main number numbers large small high low significant significantly
respectively explicitly exactly also furthermore moreover addition additionally
terms term order orders form forms type types kind kinds part parts set sets based
possible possibly allow allows allowed lead leads leading make makes made take takes
taken yield yields yielded turn turns out argue argues argued point points show
""".split())


@dataclass(frozen=True)
class SourcePaper:
    """One dev query's source paper, as the forms are made from it."""

    query_id: str
    paper_id: str
    title: str
    abstract: str
    relevant_ids: tuple[str, ...]


@dataclass(frozen=True)
class DocumentFrequencies:
    """In how many of the corpus's papers (title and abstract) each term occurs."""

    papers: int
    counts: Counter[str]

    def idf(self, term: str) -> float:
        return math.log(self.papers / max(self.counts[term], 1))


@dataclass
class FormFile:
    """What one form's file got: lines written and queries left out, by reason."""

    path: Path
    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def line(self) -> str:
        left = ", ".join(f"{n} {why}" for why, n in self.skipped.items())
        return f"{self.path}: {self.written} queries" + (f" (left out: {left})" if left else "")


def content_terms(text: str) -> list[str]:
    """The text's terms in order, lower case, without TeX math and commands, STOPWORDS and
    terms under MIN_TERM_CHARS characters."""
    words = plain_text(TEX_MATH.sub(" ", text)).lower()
    return [term for term in TERM.findall(words)
            if len(term) >= MIN_TERM_CHARS and term not in STOPWORDS]


def keyphrase_terms(title: str, abstract: str, frequencies: DocumentFrequencies,
                    words: int) -> list[str]:
    """The `words` terms of the paper that score highest by occurrences x IDF (a title
    occurrence counts twice; ties go to the earlier term), in the order they first occur;
    a term only this paper uses (document frequency 1) is left out: it finds nothing else."""
    title_terms, abstract_terms = content_terms(title), content_terms(abstract)
    occurrences = Counter(title_terms) + Counter(title_terms) + Counter(abstract_terms)
    first = {term: place for place, term in reversed(list(enumerate(title_terms
                                                                     + abstract_terms)))}
    eligible = [term for term in occurrences if frequencies.counts[term] >= 2]
    best = sorted(eligible, key=lambda t: (-occurrences[t] * frequencies.idf(t), first[t]))
    return sorted(best[:words], key=first.__getitem__)


def draw(seed: int, query_id: str, form: str) -> random.Random:
    """The generator of one query's draws for one form: the same lines on every run, and
    a query's draw does not depend on which other queries the set holds."""
    return random.Random(f"crase-query-forms:{seed}:{query_id}:{form}")


def given_seed_ids(source: SourcePaper, seed: int) -> list[str] | None:
    """GIVEN_SEEDS relevant papers drawn with the seed, sorted; None where fewer than one
    relevant paper would be left to find."""
    pool = sorted(set(source.relevant_ids) - {source.paper_id})
    if len(pool) <= GIVEN_SEEDS:
        return None
    return sorted(draw(seed, source.query_id, "seeds").sample(pool, GIVEN_SEEDS))


def rule_line(source: SourcePaper, form: str, seed: int,
              frequencies: DocumentFrequencies) -> dict[str, Any] | str:
    """One rule form's query line, or why this source paper gets none."""
    line: dict[str, Any] = {"query_id": f"{source.query_id}-{form}",
                            "source_paper_id": source.paper_id, "form": form,
                            "from_query_id": source.query_id,
                            "generator": f"rule:{form}@{RULE_VERSION}"}
    relevant = [p for p in source.relevant_ids if p != source.paper_id]
    if form == "title":
        return line | {"query": plain_text(source.title).strip(), "relevant_ids": relevant}
    if form == "keyphrase":
        words = draw(seed, source.query_id, form).randint(*KEYPHRASE_WORDS)
        terms = keyphrase_terms(source.title, source.abstract, frequencies, words)
        if len(terms) < KEYPHRASE_WORDS[0]:
            return f"fewer than {KEYPHRASE_WORDS[0]} terms used by another paper"
        return line | {"query": " ".join(terms), "relevant_ids": relevant, "seed": seed}
    if form == "sentence":
        sentences = idea_sentences(source.abstract)
        if not sentences:
            return "no abstract sentence long enough to describe an idea"
        return line | {"query": draw(seed, source.query_id, form).choice(sentences),
                       "relevant_ids": relevant, "seed": seed}
    given = given_seed_ids(source, seed)
    if given is None:
        return f"{GIVEN_SEEDS} or fewer relevant papers"
    query = plain_text(source.title).strip() if form == "title-seeds" else ""
    return line | {"query": query, "seed_ids": given,
                   "relevant_ids": [p for p in relevant if p not in given], "seed": seed}


def read_sources(corpus: Path) -> tuple[list[SourcePaper], DocumentFrequencies]:
    """The dev set's source papers with their text, and the corpus's document
    frequencies, in one pass over papers.jsonl."""
    rows = read_query_file(corpus / "queries.jsonl")
    wanted = {row["source_paper_id"] for row in rows}
    texts: dict[str, tuple[str, str]] = {}
    counts: Counter[str] = Counter()
    papers = 0
    for paper in read_papers(corpus / "papers.jsonl"):
        title, abstract = paper.get("title") or "", paper.get("abstract") or ""
        papers += 1
        counts.update(set(content_terms(title)) | set(content_terms(abstract)))
        if paper["id"] in wanted:
            texts[paper["id"]] = (title, abstract)
    missing = sorted(wanted - set(texts))
    if missing:
        raise EvaluationError(f"{corpus}/papers.jsonl lacks source papers {missing[:5]}; "
                              "give the corpus folder the queries were made from")
    sources = [SourcePaper(row["query_id"], row["source_paper_id"],
                           *texts[row["source_paper_id"]], tuple(row["relevant_ids"]))
               for row in rows]
    return sources, DocumentFrequencies(papers, counts)


def read_papers(path: Path) -> Iterator[dict[str, Any]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as err:
        raise EvaluationError(f"cannot read corpus file {path}: {err}") from err
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                paper = json.loads(line)
            except json.JSONDecodeError as err:
                raise EvaluationError(f"{path}:{number} is not JSON: {err}") from err
            if not isinstance(paper, dict) or not isinstance(paper.get("id"), str):
                raise EvaluationError(f"{path}:{number}: a paper line needs an id string")
            yield paper


def write_rule_form(sources: list[SourcePaper], form: str, seed: int,
                    frequencies: DocumentFrequencies, path: Path) -> FormFile:
    """The whole file of one rule form, replaced at once."""
    written = FormFile(path)
    lines = []
    for source in sources:
        line = rule_line(source, form, seed, frequencies)
        if isinstance(line, str):
            written.skip(line)
            continue
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial_path = path.with_suffix(".jsonl.partial")
    partial_path.write_text("".join(lines), encoding="utf-8")
    partial_path.replace(path)
    written.written = len(lines)
    return written


def question_call(source: SourcePaper, endpoint: ModelEndpoint) -> ModelCall[QuestionReply]:
    prompt = load_prompt(QUESTION_PROMPT)
    title = plain_text(source.title).strip()
    abstract = plain_text(source.abstract).strip()[:endpoint.max_input_chars]
    return ModelCall(prompt, {"abstract": data_block(abstract)},
                     subject=source.paper_id, stage="query_forms",
                     check=partial(check_question, title=title))


def question_line(source: SourcePaper, question: str, model: str,
                  prompt: str) -> dict[str, Any]:
    return {"query_id": f"{source.query_id}-question", "query": question,
            "source_paper_id": source.paper_id,
            "relevant_ids": [p for p in source.relevant_ids if p != source.paper_id],
            "form": "question", "from_query_id": source.query_id,
            "generator": model, "prompt": prompt}


def write_questions(sources: list[SourcePaper], settings: Settings, path: Path) -> FormFile:
    """Asks the model for each source paper's question the file lacks, appending each as
    it arrives; a failed call is reported and asked again on the next run."""
    prompt = load_prompt(QUESTION_PROMPT)
    endpoint = endpoint_for(settings.models, prompt.role)
    runner = ModelRunner.from_settings(settings.models)
    earlier = read_query_file(path) if path.is_file() else []
    others = sorted({row.get("prompt") for row in earlier} - {prompt.ref}, key=str)
    if others:
        raise EvaluationError(f"{path} holds questions of prompt {others[0]}, not "
                              f"{prompt.ref}; move it away to write the set anew")
    done = {row["from_query_id"] for row in earlier}
    written = FormFile(path, written=len(done))
    path.parent.mkdir(parents=True, exist_ok=True)
    for source in sources:
        if source.query_id in done:
            continue
        outcome = runner.run_one(endpoint, question_call(source, endpoint))
        if isinstance(outcome, ModelFailure):
            print(f"{source.query_id}: no question ({outcome.kind}: {outcome.detail}; "
                  f"last reply {outcome.last_reply!r})", file=sys.stderr, flush=True)
            written.skip(f"model failure {outcome.kind}")
            continue
        line = question_line(source, outcome.value.question, outcome.model, outcome.prompt)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        written.written += 1
        print(f"{source.query_id}: {outcome.value.question}", file=sys.stderr, flush=True)
    return written


def write_forms(corpus: Path, out: Path, forms: tuple[str, ...], seed: int,
                limit: int | None, settings: Settings | None = None) -> list[FormFile]:
    """Every asked form of one corpus's dev set, into `out/<corpus name>/<form>.jsonl`."""
    unknown = sorted(set(forms) - set(FORMS))
    if unknown:
        raise EvaluationError(f"unknown query forms {unknown}; known: {list(FORMS)}")
    sources, frequencies = read_sources(corpus)
    sources = sources[:limit] if limit is not None else sources
    folder = out / corpus.resolve().name
    files = [write_rule_form(sources, form, seed, frequencies, folder / f"{form}.jsonl")
             for form in RULE_FORMS if form in forms]
    if "question" in forms:
        files.append(write_questions(sources, settings or Settings(),
                                     folder / "question.jsonl"))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crase.bench.query_forms",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, action="append",
                        metavar="DIR", help="a corpus folder with papers.jsonl and "
                        "queries.jsonl (repeat for several)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="output folder (default: var_dir/query-forms)")
    parser.add_argument("--forms", nargs="+", choices=FORMS, default=list(RULE_FORMS),
                        help=f"forms to write (default: {' '.join(RULE_FORMS)}; question "
                             "needs the planner role's model server)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N queries")
    args = parser.parse_args(argv)
    settings = Settings()
    out = args.out or settings.var_dir / "query-forms"
    for corpus in args.corpus:
        for written in write_forms(corpus, out, tuple(args.forms), args.seed, args.limit,
                                   settings):
            print(written.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
