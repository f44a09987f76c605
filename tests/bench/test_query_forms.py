"""The query-form writer (bench/query_forms.py): each form's lines, their fields and draws,
the keyphrase rule, and the question path against a local chat server. No database."""

import json
from collections import Counter
from pathlib import Path

import pytest

from crase.bench.query_forms import (
    GIVEN_SEEDS,
    RULE_FORMS,
    DocumentFrequencies,
    content_terms,
    keyphrase_terms,
    write_forms,
)
from crase.errors import EvaluationError
from crase.prompts.replies import QuestionReply, check_question
from crase.search.query_sets import read_query_file
from crase.settings import Settings
from tests.llm.chat_server import ChatServer, Reply
from tests.sample_slice import SAMPLE


def sample_corpus(folder: Path, queries: int = 6) -> Path:
    """A corpus folder in the shared data's shapes: the sample's first queries, their
    source papers and references, and 200 other sample papers for the frequencies."""
    rows = [json.loads(line) for line in (SAMPLE / "queries.jsonl").open()][:queries]
    wanted = {r["source_paper_id"] for r in rows} | {p for r in rows for p in r["relevant_ids"]}
    papers = []
    for line in (SAMPLE / "papers.jsonl").open():
        paper = json.loads(line)
        if paper["id"] in wanted or len(papers) < 200:
            papers.append(paper)
    folder.mkdir(parents=True)
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "papers.jsonl").write_text("".join(json.dumps(p) + "\n" for p in papers))
    return folder


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_corpus(tmp_path_factory.mktemp("corpus") / "hepth")


@pytest.fixture(scope="module")
def written(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("forms")
    write_forms(corpus, out, RULE_FORMS, seed=0, limit=None)
    return out / "hepth"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_rule_form_is_written_deterministically(corpus: Path, written: Path,
                                                      tmp_path: Path) -> None:
    write_forms(corpus, tmp_path, RULE_FORMS, seed=0, limit=None)
    for form in RULE_FORMS:
        assert (tmp_path / "hepth" / f"{form}.jsonl").read_bytes() == \
            (written / f"{form}.jsonl").read_bytes(), form
    write_forms(corpus, tmp_path / "other", ("seeds", "keyphrase"), seed=1, limit=None)
    assert [r["seed_ids"] for r in lines(tmp_path / "other" / "hepth" / "seeds.jsonl")] != \
        [r["seed_ids"] for r in lines(written / "seeds.jsonl")]


def test_a_query_draws_the_same_whatever_else_the_set_holds(corpus: Path, written: Path,
                                                            tmp_path: Path) -> None:
    write_forms(corpus, tmp_path, ("seeds", "keyphrase"), seed=0, limit=2)
    for form in ("seeds", "keyphrase"):
        assert lines(tmp_path / "hepth" / f"{form}.jsonl") == lines(written / f"{form}.jsonl")[:2]


def test_lines_have_the_benchmark_fields_and_keep_the_source_hidden(corpus: Path,
                                                                    written: Path) -> None:
    originals = {r["query_id"]: r for r in read_query_file(corpus / "queries.jsonl")}
    titles = {p["id"]: p["title"] for p in map(json.loads, (corpus / "papers.jsonl").open())}
    for form in RULE_FORMS:
        rows = read_query_file(written / f"{form}.jsonl")  # the benchmark's own reader
        assert len(rows) == len(originals), form
        for row in rows:
            original = originals[row["from_query_id"]]
            assert row["query_id"] == f"{original['query_id']}-{form}"
            assert row["form"] == form and row["generator"] == f"rule:{form}@1"
            assert row["source_paper_id"] == original["source_paper_id"]
            given = row.get("seed_ids", [])
            assert row["source_paper_id"] not in given + row["relevant_ids"]
            assert not set(given) & set(row["relevant_ids"])
            assert sorted(given + row["relevant_ids"]) == sorted(original["relevant_ids"])
            if form in ("title", "title-seeds"):
                assert row["query"] == titles[row["source_paper_id"]]
            if form in ("seeds", "title-seeds"):
                assert len(given) == GIVEN_SEEDS and row["seed"] == 0
            if form == "seeds":
                assert row["query"] == ""
            if form == "keyphrase":
                assert 2 <= len(row["query"].split()) <= 6
    seeds = [r["seed_ids"] for r in lines(written / "seeds.jsonl")]
    assert seeds == [r["seed_ids"] for r in lines(written / "title-seeds.jsonl")]


def test_a_source_with_too_few_references_gets_no_seeded_line(tmp_path: Path) -> None:
    corpus = sample_corpus(tmp_path / "small", queries=2)
    rows = read_query_file(corpus / "queries.jsonl")
    rows[0]["relevant_ids"] = rows[0]["relevant_ids"][:GIVEN_SEEDS]
    (corpus / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    files = write_forms(corpus, tmp_path / "out", ("title", "seeds"), seed=0, limit=None)
    assert [f.written for f in files] == [2, 1]
    assert files[1].skipped == Counter({f"{GIVEN_SEEDS} or fewer relevant papers": 1})


def test_keyphrase_rule_by_hand() -> None:
    frequencies = DocumentFrequencies(100, Counter({
        "tachyon": 5, "condensation": 10, "d-branes": 20, "unstable": 40, "potential": 30,
        "string": 60, "open": 50, "lonely": 1}))
    title = "Tachyon condensation on unstable D-branes"
    abstract = ("We study the open string tachyon potential in $\\Phi^4$ theory; the "
                "tachyon rolls. A lonely word.")
    assert content_terms(abstract) == ["open", "string", "tachyon", "potential", "theory",
                                       "tachyon", "rolls", "lonely", "word"]
    # tachyon 2 x 2 (title) + 2 = 4 occurrences: first; d-branes, condensation and
    # unstable once each in the title (2); the abstract's terms once.
    assert keyphrase_terms(title, abstract, frequencies, 3) == \
        ["tachyon", "condensation", "d-branes"]
    # Kept in the order they first occur, not by score.
    assert keyphrase_terms(title, abstract, frequencies, 5) == \
        ["tachyon", "condensation", "unstable", "d-branes", "potential"]
    # A term no other paper uses ("lonely"), or none at all ("theory", "rolls"), is never
    # chosen, however many are asked for.
    chosen = keyphrase_terms(title, abstract, frequencies, 20)
    assert {"lonely", "theory", "rolls", "word"}.isdisjoint(chosen)
    assert "phi" not in content_terms("$\\Phi$ and \\tilde{x} fields")


def test_a_question_is_refused_for_a_statement_a_title_or_a_pointer_to_its_paper() -> None:
    title = "Structure of supergravity theories"
    assert check_question(QuestionReply(question="Which papers classify supergravity "
                                                 "theories in dimensions four to eleven?"),
                          title) == []
    problems = {
        "Supergravity theories in dimensions four to eleven are classified here.":
            "question mark",
        "Which papers explain the structure of supergravity theories in all dimensions?":
            "repeats the title",
        "What earlier work does this paper build on for supergravity theories?":
            "refers to the paper itself",
        "Which supergravity papers?": "has 3 words",
        "Which papers classify supergravity theories? Are there reviews of them too?":
            "one question, not several",
    }
    for question, problem in problems.items():
        found = check_question(QuestionReply(question=question), title)
        assert len(found) == 1 and problem in found[0], question


def test_unknown_form_and_missing_source_text_are_refused(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="unknown query forms"):
        write_forms(corpus, tmp_path, ("slogan",), seed=0, limit=None)
    broken = sample_corpus(tmp_path / "broken", queries=1)
    source = read_query_file(broken / "queries.jsonl")[0]["source_paper_id"]
    kept = [line for line in (broken / "papers.jsonl").read_text().splitlines()
            if json.loads(line)["id"] != source]
    (broken / "papers.jsonl").write_text("\n".join(kept) + "\n")
    with pytest.raises(EvaluationError, match="lacks source papers"):
        write_forms(broken, tmp_path, ("title",), seed=0, limit=None)


def test_questions_come_from_the_model_with_model_and_prompt_named(corpus: Path,
                                                                   tmp_path: Path) -> None:
    titles = {p["id"]: p["title"] for p in map(json.loads, (corpus / "papers.jsonl").open())}
    first = read_query_file(corpus / "queries.jsonl")[0]
    copied = f"What about {titles[first['source_paper_id']]}?"
    good = "Which papers study strings with quantized masses in plane-wave backgrounds?"
    with ChatServer().running() as server:
        server.script(Reply(json.dumps({"question": copied})),  # copies the title: repaired
                      Reply(json.dumps({"question": good})),
                      Reply(json.dumps({"question": "Not a question at all, said twice."})),
                      Reply(json.dumps({"question": "Not a question at all, said twice."})))
        settings = Settings(var_dir=tmp_path / "var", models={
            "cache_enabled": False,
            "planner": {"base_url": server.base_url, "model": "test/qwen", "max_retries": 0,
                        "timeout_s": 5.0}})
        files = write_forms(corpus, tmp_path, ("question",), seed=0, limit=2,
                            settings=settings)
        assert len(server.requests) == 4
        assert "repeats the title" in server.requests[1]["messages"][-1]["content"]
        assert files[0].written == 1 and sum(files[0].skipped.values()) == 1
        rows = read_query_file(tmp_path / "hepth" / "question.jsonl")
        assert rows == [{
            "query_id": f"{first['query_id']}-question", "query": good,
            "source_paper_id": first["source_paper_id"], "relevant_ids": first["relevant_ids"],
            "form": "question", "from_query_id": first["query_id"], "generator": "test/qwen",
            "prompt": "write_search_question@5"}]
        # A rerun asks only for the question that failed.
        server.script(Reply(json.dumps({"question": good})))
        again = write_forms(corpus, tmp_path, ("question",), seed=0, limit=2,
                            settings=settings)
        assert len(server.requests) == 5 and again[0].written == 2
        # Questions of another prompt version are never mixed into the file.
        path = tmp_path / "hepth" / "question.jsonl"
        path.write_text(path.read_text().replace("write_search_question@5", "old@1"))
        with pytest.raises(EvaluationError, match="holds questions of prompt old@1"):
            write_forms(corpus, tmp_path, ("question",), seed=0, limit=3, settings=settings)
        assert len(server.requests) == 5
