"""The learned order's model: its scores are the sum of the contributions it shows, it
survives a round trip to its file, the trainer fits it, one file holds a model per query
form, and the shipped model was trained on pre-2003 hep-th papers only."""

from pathlib import Path

import numpy as np
import pytest

from crase.errors import OrderModelInvalid
from crase.search.candidate_features import FEATURES, Candidates
from crase.search.order_model import (
    SHIPPED_MODEL,
    OrderModel,
    load_model,
    order_candidates,
    save_model,
)
from crase.search.order_training import (
    DEFAULT_FEATURES,
    GIVEN_PAPERS,
    TrainingExample,
    TrainingQuery,
    fit_linear,
    in_forms,
    query_text,
    train_order_model,
)
from crase.search.request import QUERY_FORMS, query_form

TWELVE_WORDS = " ".join(["word"] * 12)


def candidates(rows: int, seed: int) -> Candidates:
    generator = np.random.default_rng(seed)
    return Candidates([f"p{i}" for i in range(rows)],
                      generator.normal(size=(rows, len(FEATURES))))


def test_score_is_the_sum_of_the_contributions() -> None:
    model = OrderModel("m", ("walk_log_score", "dense_cosine"), (0.0, 1.0), (2.0, 1.0),
                        (1.0, -0.5))
    found = candidates(6, 0)
    placed = order_candidates(model, found, 3)
    assert len(placed) == 3
    scores = [p.score for p in placed]
    assert scores == sorted(scores, reverse=True)
    walk, dense = found.column("walk_log_score"), found.column("dense_cosine")
    for paper in placed:
        i = found.ids.index(paper.id)
        assert paper.score == pytest.approx(walk[i] / 2 - 0.5 * (dense[i] - 1.0))
        assert sum(paper.contributions.values()) == pytest.approx(paper.score, abs=1e-3)


def test_model_file_round_trip_and_refusals(tmp_path: Path) -> None:
    model = OrderModel("m", ("walk_log_rank",), (1.0,), (2.0,), (-0.3,), {"corpus": "x"})
    save_model(model, tmp_path / "m.json")
    assert load_model(tmp_path / "m.json") == model
    (tmp_path / "bad.json").write_text('{"format": "crase-linear-ranker/1", "features": '
                                       '["no_such_feature"], "mean": [0], "scale": [1], '
                                       '"weights": [1]}')
    with pytest.raises(OrderModelInvalid):
        load_model(tmp_path / "bad.json")
    with pytest.raises(OrderModelInvalid):
        load_model(tmp_path / "missing.json")


def test_fit_ranks_the_informative_feature_first() -> None:
    generator = np.random.default_rng(1)
    examples = []
    for q in range(30):
        found = candidates(40, q)
        labels = (found.column("cited_by_seeds") + 0.3 * generator.normal(size=40) > 1.0)
        examples.append(TrainingExample(TrainingQuery(f"s{q}", TWELVE_WORDS, 2000,
                                                      frozenset()),
                                        found, labels.astype(float)))
    _, _, weights = fit_linear(examples, FEATURES)
    assert int(np.argmax(weights)) == FEATURES.index("cited_by_seeds")
    model = train_order_model(examples, "m", "synthetic", {"before_year": 2001})
    # Unless told otherwise, a model leaves out the walk's score and reached flag.
    assert model.features == DEFAULT_FEATURES
    assert "walk_log_score" not in model.features and "walk_log_rank" in model.features
    assert model.description["source_year_max"] == 2000
    assert model.description["queries"] == 30


def test_a_query_form_is_its_length_or_the_papers_it_starts_from() -> None:
    assert query_form("Wilson loops", []) == "words"
    assert query_form(TWELVE_WORDS, []) == "text"
    assert query_form("", ["p1"]) == query_form(TWELVE_WORDS, ["p1"]) == "papers"


def test_one_file_holds_a_model_per_query_form(tmp_path: Path) -> None:
    """Each form's model is fit on that form's queries alone: here each form's relevant
    papers stand out by another feature, and each model weighs that feature most."""
    informative = {"text": "cited_by_seeds", "words": "bm25_relative_score",
                   "papers": "cocited_with_seeds"}
    asked = {"text": (TWELVE_WORDS, ()), "words": ("Wilson loops", ()),
             "papers": ("", ("g1",))}
    examples = []
    for form, feature in informative.items():
        for q in range(20):
            found = candidates(40, q)
            labels = (found.column(feature) > 1.0).astype(float)
            text, given = asked[form]
            examples.append(TrainingExample(
                TrainingQuery(f"{form}{q}", text, 2000, frozenset(), given), found, labels))
    model = train_order_model(examples, "m", "synthetic", {}, FEATURES)
    for form, feature in informative.items():
        trained = model.for_form(form)
        assert trained is not None and trained.form == form
        assert trained.description["queries"] == 20
        assert trained.features[int(np.argmax(trained.weights))] == feature
    save_model(model, tmp_path / "forms.json")
    assert load_model(tmp_path / "forms.json") == model
    # A file of one form (every file written before forms) has no model for the others.
    text_only = OrderModel(model.name, model.features, model.mean, model.scale, model.weights)
    assert text_only.for_form("text") is text_only and text_only.for_form("words") is None


def test_each_source_paper_is_asked_in_every_form() -> None:
    answer = frozenset(f"r{i}" for i in range(6))
    short = TrainingQuery("s1", TWELVE_WORDS + " more", 2002, answer, title="Wilson loops")
    long = TrainingQuery("s2", TWELVE_WORDS + " more", 2002, answer, title=TWELVE_WORDS)
    asked = in_forms([short, long], QUERY_FORMS, seed=0)
    forms = [(query.source_id, query.form, query.text) for query in asked]
    assert forms == [("s1", "text", short.text), ("s1", "words", "Wilson loops"),
                     ("s1", "papers", ""), ("s1", "papers", "Wilson loops"),
                     ("s2", "text", long.text),  # a 12-word title is a text query
                     ("s2", "papers", ""), ("s2", "papers", TWELVE_WORDS)]
    for query in asked:
        if query.given:
            assert len(query.given) == GIVEN_PAPERS and set(query.given) <= answer
            assert query.answer == answer - set(query.given)
    assert in_forms([short], QUERY_FORMS, seed=0) == in_forms([short], QUERY_FORMS, seed=0)


def test_query_text_is_the_title_and_two_sentences() -> None:
    text = query_text("A title.", "First one. Second one!  Third one. Fourth.")
    assert text == "A title. First one. Second one!"


def test_shipped_model_was_trained_on_pre_2003_hep_th_only() -> None:
    model = load_model(SHIPPED_MODEL)
    described = model.description
    assert described["corpus"] == "hep-th"
    assert described["before_year"] == 2003 and described["source_year_max"] < 2003
    sources = described["sources"]
    assert len(sources) == described["queries"] > 0
    assert all(year is not None and year < 2003 for _, year in sources)
    # hep-th ids are 7-digit arXiv numbers (yymmnnn) of 1992-2002: no cs768 id
    # (2106.04689) and no CSFCube id among them.
    assert all(len(paper) == 7 and paper.isdigit() and paper[:2] in
               {"92", "93", "94", "95", "96", "97", "98", "99", "00", "01", "02"}
               for paper, _ in sources)
    assert described["held_out_query_files"] == ["hepth/queries.jsonl"]
    for form in QUERY_FORMS:  # every form's model, from the same draw of source papers
        trained = model.for_form(form)
        assert trained is not None
        assert {paper for paper, _ in trained.description["sources"]} <= {
            paper for paper, _ in sources}
