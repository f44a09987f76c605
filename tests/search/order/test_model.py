"""The learned order's models: LambdaRank fit per query form, the same bytes from the same
training, a round trip through the model folder with its format and feature checks, the
contributions each result shows, and the shipped models trained on pre-2003 hep-th only."""

import json
from pathlib import Path

import numpy as np
import pytest

from crase.errors import OrderModelInvalid
from crase.models.lambdarank import LambdaRankParams
from crase.search.order.features import FEATURES, Candidates
from crase.search.order.linear_ranking import LinearRanking
from crase.search.order.model import (
    MANIFEST,
    SHIPPED_MODEL,
    OrderModel,
    OrderModels,
    load_models,
    order_candidates,
    save_models,
)
from crase.search.order.training import (
    DEFAULT_FEATURES,
    GIVEN_PAPERS,
    IDEA_MIN_WORDS,
    TrainingExample,
    TrainingQuery,
    in_forms,
    query_text,
    train_order_model,
)
from crase.search.request import ORDER_FORMS, QUERY_FORMS, query_form

TWELVE_WORDS = " ".join(["word"] * 12)
SMALL = LambdaRankParams(trees=20, leaves=4, min_data_in_leaf=5)


def candidates(rows: int, seed: int) -> Candidates:
    generator = np.random.default_rng(seed)
    return Candidates([f"p{i}" for i in range(rows)],
                      generator.normal(size=(rows, len(FEATURES))))


def examples_standing_out_by(feature: str, text: str, given: tuple[str, ...] = (),
                             count: int = 20, asked_as: str | None = None
                             ) -> list[TrainingExample]:
    """Queries whose relevant candidates are those with a high `feature`."""
    out = []
    for q in range(count):
        found = candidates(40, q)
        labels = (found.column(feature) > 1.0).astype(float)
        out.append(TrainingExample(TrainingQuery(f"{feature}{q}", text, 2000, frozenset(),
                                                 given, asked_as=asked_as), found, labels))
    return out


def test_each_form_is_fit_on_its_own_queries_and_ranks_by_its_signal() -> None:
    informative = {"text": ("cited_by_seeds", TWELVE_WORDS, (), None),
                   "words": ("bm25_relative_score", "Wilson loops", (), None),
                   "papers": ("cocited_with_seeds", "", ("g1",), None),
                   "idea": ("anchor_similarity_max", TWELVE_WORDS, (), "idea")}
    examples = [e for feature, text, given, asked_as in informative.values()
                for e in examples_standing_out_by(feature, text, given, asked_as=asked_as)]
    models = train_order_model(examples, "m", "synthetic", {"before_year": 2001}, FEATURES,
                               SMALL)
    for form, (feature, *_) in informative.items():
        trained = models.for_form(form)
        assert trained is not None and trained.form == form
        assert trained.description["queries"] == 20
        gains = trained.ranking.importances()
        assert max(gains, key=gains.__getitem__) == feature
        # The model puts the relevant candidates of a new query first.
        found = candidates(40, 99)
        placed = order_candidates(trained, found, 3)
        assert all(found.column(feature)[found.ids.index(p.id)] > 1.0 for p in placed)


def test_the_default_features_leave_out_the_walks_score_and_reached_flag() -> None:
    models = train_order_model(examples_standing_out_by("cited_by_seeds", TWELVE_WORDS),
                               "m", "synthetic", {}, params=SMALL)
    text = models.for_form("text")
    assert text is not None and text.features == DEFAULT_FEATURES
    assert "walk_log_score" not in text.features and "walk_log_rank" in text.features
    assert text.description["source_year_max"] == 2000
    assert models.for_form("words") is None


def test_the_same_training_gives_the_same_bytes(tmp_path: Path) -> None:
    examples = (examples_standing_out_by("cited_by_seeds", TWELVE_WORDS)
                + examples_standing_out_by("bm25_relative_score", "Wilson loops"))
    for name in ("first", "second"):
        save_models(train_order_model(examples, "m", "synthetic", {}, params=SMALL),
                    tmp_path / name)
    for file in ("model.json", "text.txt", "words.txt"):
        assert (tmp_path / "first" / file).read_bytes() == (tmp_path / "second" / file
                                                           ).read_bytes()


def test_contributions_are_the_shares_of_the_score() -> None:
    models = train_order_model(examples_standing_out_by("cited_by_seeds", TWELVE_WORDS),
                               "m", "synthetic", {}, FEATURES, SMALL)
    model = models.for_form("text")
    assert model is not None
    found = candidates(30, 7)
    placed = order_candidates(model, found, 5)
    scores = [p.score for p in placed]
    assert scores == sorted(scores, reverse=True) and len(placed) == 5
    everything = model.ranking.contributions(model.values(found))
    expected = model.ranking.booster.predict(model.values(found), pred_contrib=True)[:, -1]
    for paper in placed:
        row = found.ids.index(paper.id)
        # The shares and the model's expected value add up to the score.
        assert everything[row].sum() + expected[row] == pytest.approx(paper.score, abs=1e-6)
        assert max(paper.contributions, key=lambda f: abs(paper.contributions[f])) in FEATURES


def test_model_folder_round_trip_and_refusals(tmp_path: Path) -> None:
    models = train_order_model(examples_standing_out_by("cited_by_seeds", TWELVE_WORDS),
                               "m", "synthetic", {"corpus_note": "x"}, params=SMALL)
    save_models(models, tmp_path / "m")
    again = load_models(tmp_path / "m")
    assert again.for_form("text").ranking.text == models.for_form("text").ranking.text
    assert load_models(tmp_path / "m" / MANIFEST).forms.keys() == {"text"}
    manifest = json.loads((tmp_path / "m" / MANIFEST).read_text())

    def refused(change: dict, text: str | None = None) -> str:
        folder = tmp_path / f"bad{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / MANIFEST).write_text(json.dumps(manifest | change))
        (folder / "text.txt").write_text(text if text is not None
                                         else models.for_form("text").ranking.text)
        with pytest.raises(OrderModelInvalid) as refusal:
            load_models(folder)
        return str(refusal.value)

    assert "crase-order-model/2" in refused({"format": "crase-linear-ranker/1"})
    assert "features" in refused({"forms": {"text": manifest["forms"]["text"] | {
        "features": ["no_such_feature"]}}})
    # A LightGBM file over other features than the manifest names.
    reordered = list(reversed(DEFAULT_FEATURES))
    assert "other features" in refused({"forms": {"text": manifest["forms"]["text"] | {
        "features": reordered}}})
    assert "not a LightGBM model" in refused({}, text="tree\nversion=v4\ngarbage")
    assert "forms" in refused({"forms": {"no-such-form": manifest["forms"]["text"]}})
    with pytest.raises(OrderModelInvalid):
        load_models(tmp_path / "missing")


def test_a_folder_holds_each_forms_learner_and_checks_a_linear_file(tmp_path: Path) -> None:
    trained = train_order_model(examples_standing_out_by("cocited_with_seeds", "", ("g1",)),
                                "m", "synthetic", {}, params=SMALL)
    features = ("cited_by_seeds", "walk_log_rank")
    linear = OrderModel("m", "text", LinearRanking(features, (0.0, 1.0), (1.0, 2.0),
                                                   (2.0, -1.0)), {"corpus": "synthetic"})
    save_models(OrderModels("m", {"text": linear, **trained.forms}), tmp_path / "m")
    assert sorted(f.name for f in (tmp_path / "m").iterdir()) == [
        MANIFEST, "papers.txt", "text.json"]
    again = load_models(tmp_path / "m")
    assert {form: model.learner for form, model in again.forms.items()} == {
        "text": "linear", "papers": "lambdarank"}
    # The linear model's score is the sum of its standardised terms, each a contribution.
    found = candidates(30, 3)
    placed = order_candidates(again.forms["text"], found, 3)
    rows = [found.ids.index(p.id) for p in placed]
    z = (found.values[:, [FEATURES.index(f) for f in features]] - (0.0, 1.0)) / (1.0, 2.0)
    assert [p.score for p in placed] == pytest.approx([float(z[r] @ (2.0, -1.0)) for r in rows])
    assert placed[0].contributions == {
        f: round(float(t), 4) for f, t in zip(features, z[rows[0]] * (2.0, -1.0), strict=True)}
    assert again.forms["text"].summary()["learner"] == "linear"
    # Saving the papers form alone removes the text form's file.
    save_models(OrderModels("m", {"papers": again.forms["papers"]}), tmp_path / "m")
    assert not (tmp_path / "m" / "text.json").exists()
    # A linear file that is not finite, or names other features than the manifest.
    save_models(OrderModels("m", {"text": linear}), tmp_path / "bad")
    written = json.loads((tmp_path / "bad" / "text.json").read_text())
    for change, reason in (({"weights": [float("nan"), 1.0]}, "finite"),
                           ({"scale": [0.0, 1.0]}, "positive"),
                           ({"features": list(reversed(features))}, "other features"),
                           ({"format": "x"}, "crase-linear-ranking/1")):
        (tmp_path / "bad" / "text.json").write_text(json.dumps(written | change))
        with pytest.raises(OrderModelInvalid, match=reason):
            load_models(tmp_path / "bad")
    manifest = json.loads((tmp_path / "bad" / MANIFEST).read_text())
    manifest["forms"]["text"]["learner"] = "forest"
    (tmp_path / "bad" / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(OrderModelInvalid, match="learner 'forest'"):
        load_models(tmp_path / "bad")


def test_a_previous_releases_model_file_is_read_as_linear_forms(tmp_path: Path) -> None:
    features = ["cited_by_seeds", "walk_log_rank"]
    old = {"format": "crase-linear-ranker/1", "name": "mine", "form": "text",
           "features": features, "mean": [0.0, 1.0], "scale": [1.0, 2.0],
           "weights": [2.0, -1.0], "description": {"corpus": "mine"},
           "forms": {"papers": {"features": features[:1], "mean": [0.0], "scale": [1.0],
                                "weights": [1.0], "description": {}}}}
    (tmp_path / "mine.json").write_text(json.dumps(old))
    models = load_models(tmp_path / "mine.json")
    assert models.name == "mine" and set(models.forms) == {"text", "papers"}
    assert all(model.learner == "linear" for model in models.forms.values())
    text = models.forms["text"]
    assert text.description == {"corpus": "mine"} and text.features == tuple(features)
    found = candidates(10, 5)
    z = (found.values[:, [FEATURES.index(f) for f in features]] - (0.0, 1.0)) / (1.0, 2.0)
    assert order_candidates(text, found, 1)[0].score == pytest.approx(float(
        max(z @ (2.0, -1.0))))
    for change in ({"weights": [2.0]}, {"features": ["no_such_feature", "walk_log_rank"]},
                   {"format": "something-else/1"}, {"forms": {"poem": old["forms"]["papers"]}}):
        (tmp_path / "bad.json").write_text(json.dumps(old | change))
        with pytest.raises(OrderModelInvalid):
            load_models(tmp_path / "bad.json")


def test_a_query_form_is_its_length_or_the_papers_it_starts_from() -> None:
    assert query_form("Wilson loops", []) == "words"
    assert query_form(TWELVE_WORDS, []) == "text"
    assert query_form("", ["p1"]) == query_form(TWELVE_WORDS, ["p1"]) == "papers"


def test_each_source_paper_is_asked_in_every_form() -> None:
    answer = frozenset(f"r{i}" for i in range(6))
    abstract = "Too short. " + " ".join(["idea"] * IDEA_MIN_WORDS) + ". Also short."
    short = TrainingQuery("s1", TWELVE_WORDS + " more", 2002, answer, title="Wilson loops",
                          abstract=abstract)
    long = TrainingQuery("s2", TWELVE_WORDS + " more", 2002, answer, title=TWELVE_WORDS)
    asked = in_forms([short, long], ORDER_FORMS, seed=0)
    forms = [(query.source_id, query.form, query.text) for query in asked]
    idea = " ".join(["idea"] * IDEA_MIN_WORDS) + "."
    assert forms == [("s1", "text", short.text), ("s1", "words", "Wilson loops"),
                     ("s1", "papers", ""), ("s1", "papers", "Wilson loops"),
                     ("s1", "idea", idea),
                     ("s2", "text", long.text),  # a 12-word title is a text query
                     ("s2", "papers", ""), ("s2", "papers", TWELVE_WORDS)]
    for query in asked:  # s2 has no abstract sentence long enough: no idea query
        if query.given:
            assert len(query.given) == GIVEN_PAPERS and set(query.given) <= answer
            assert query.answer == answer - set(query.given)
    assert in_forms([short], ORDER_FORMS, seed=0) == in_forms([short], ORDER_FORMS, seed=0)


def test_the_forms_trained_together_do_not_change_one_anothers_draw() -> None:
    # A papers model trained alone draws the same given papers as one trained beside the
    # idea form, whose sentences are drawn too.
    abstract = ". ".join(" ".join([f"word{i}"] * IDEA_MIN_WORDS) for i in range(5)) + "."
    sources = [TrainingQuery(f"s{n}", TWELVE_WORDS, 2002,
                             frozenset(f"r{n}-{i}" for i in range(9)), title=TWELVE_WORDS,
                             abstract=abstract) for n in range(8)]

    def drawn(forms: list[str], form: str) -> list[TrainingQuery]:
        return [q for q in in_forms(sources, forms, seed=3) if q.form == form]

    assert drawn(["papers"], "papers") == drawn(["text", "papers", "idea"], "papers")
    assert drawn(["idea"], "idea") == drawn(["papers", "idea"], "idea")
    assert len({q.given for q in drawn(["papers"], "papers")}) > 1


def test_query_text_is_the_title_and_two_sentences() -> None:
    text = query_text("A title.", "First one. Second one!  Third one. Fourth.")
    assert text == "A title. First one. Second one!"


def test_shipped_models_were_trained_on_pre_2003_hep_th_only() -> None:
    models = load_models(SHIPPED_MODEL)
    # The idea form (one abstract sentence) is not shipped: on one-sentence hep-th queries
    # it did not beat the text model (docs/retrieval-quality.md).
    assert set(models.forms) == set(QUERY_FORMS)
    sources_of = {}
    for form in QUERY_FORMS:
        described = models.forms[form].description
        assert described["corpus"] == "hep-th"
        assert described["before_year"] == 2003 and described["source_year_max"] < 2003
        assert described["held_out_query_files"] == ["hepth/queries.jsonl"]
        assert described["command"].startswith("crase train-order --corpus hep-th")
        sources = described["sources"]
        assert len(sources) == described["queries"] > 0
        assert all(year is not None and year < 2003 for _, year in sources)
        # hep-th ids are 7-digit arXiv numbers (yymmnnn) of 1992-2002: no cs768 id
        # (2106.04689) and no CSFCube id among them.
        assert all(len(paper) == 7 and paper.isdigit() and paper[:2] in
                   {"92", "93", "94", "95", "96", "97", "98", "99", "00", "01", "02"}
                   for paper, _ in sources)
        sources_of[form] = {paper for paper, _ in sources}
    # Each command's forms from one draw of source papers (a form may leave out a paper
    # the search orders otherwise, a thin graph): no more papers in all than it drew.
    # The text and words forms are the previous release's linear models; the papers form
    # is LambdaRank, from a later command (docs/retrieval-quality.md).
    assert {form: model.learner for form, model in models.forms.items()} == {
        "text": "linear", "words": "linear", "papers": "lambdarank"}
    by_command: dict[str, set[str]] = {}
    for form in QUERY_FORMS:
        command = models.forms[form].description["command"]
        by_command.setdefault(command, set()).update(sources_of[form])
    for command, papers in by_command.items():
        assert len(papers) <= int(command.split("--queries ")[1].split()[0])
    # Small enough to ship: every file of the folder together under 2 MB.
    assert sum(f.stat().st_size for f in SHIPPED_MODEL.iterdir()) < 2 * 1024 * 1024
