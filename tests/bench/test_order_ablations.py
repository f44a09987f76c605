"""The learned order's feature-group ablations: `evaluate --save-ablations` writes one model
folder per row of its table, `crase bench quality --order-ablations` plans one learned-order
run per model folder on every query and compares each with the search's own model and the
previous default. No server: the runs are written into the store by hand."""

import json
import pickle
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from crase.bench.learned_order import NEW_GROUPS, Gathered, main, read_gathered, write_gathered
from crase.bench.quality import (
    Dataset,
    DatasetSpec,
    Options,
    collect_results,
    main_configs,
    plan_jobs,
    resolve_queries,
)
from crase.bench.report import write_report
from crase.bench.run_store import RunStore
from crase.bench.systems import BenchQuery, SystemRun, WalkConfig, walk_system
from crase.errors import EvaluationError
from crase.graph import Graph
from crase.models.lambdarank import LambdaRankParams
from crase.search.order.features import FEATURE_GROUPS, FEATURES, Candidates
from crase.search.order.model import SHIPPED_MODEL, load_models, model_at, save_models
from crase.search.order.training import (
    DEFAULT_FEATURES,
    TrainingExample,
    TrainingQuery,
    train_order_model,
)
from crase.search.roles.from_settings import build_search_backends
from crase.settings import DatabaseSettings, SearchSettings, Settings
from tests.bench.test_quality import load_fixture

BASE = WalkConfig.from_settings(SearchSettings())
MODELS = ("all-features", "without-walk")


def test_the_key_names_the_model_file_only_when_one_is_set() -> None:
    learned = BASE.but(order="learned")
    assert learned.but(order_model=None).key() == learned.key()
    assert "model" not in learned.key()
    other = learned.but(order_model="/models/ablations/without-walk.json")
    assert other.key() == learned.key() + "-model_without-walk"
    assert other.key() != learned.but(order_model="/models/all-features.json").key()


@pytest.mark.integration
def test_a_walk_with_a_model_file_orders_by_that_model(graph: Graph, settings: Settings,
                                                         tmp_path: Path) -> None:
    rows = load_fixture(graph, query_count=1)
    query = resolve_queries(graph, rows)[0][0]
    save_models(model_at(SHIPPED_MODEL), tmp_path / "renamed")
    backends = build_search_backends(settings)
    learned = BASE.but(order="learned")
    runs = {name: walk_system(graph, backends, config, settings.search, 10)(query)
            for name, config in (("own", learned), ("file", learned.but(
                order_model=str(tmp_path / "renamed"))))}
    assert runs["own"].counts["order"]["model"]["name"] == SHIPPED_MODEL.name
    assert runs["file"].counts["order"]["model"]["name"] == "renamed"
    assert runs["file"].ranking == runs["own"].ranking  # the same weights
    assert backends.order_model is None  # the shared backends keep their own model


TEXT_QUERY = " ".join(["word"] * 12)  # a `text`-form query: the form every model has


def examples(count: int, first_year: int) -> list[TrainingExample]:
    """Queries whose relevant candidates stand out on `cited_by_seeds`."""
    generator = np.random.default_rng(3)
    found = []
    for q in range(count):
        values = generator.normal(size=(20, len(FEATURES)))
        labels = values[:, FEATURES.index("cited_by_seeds")] > 1.0
        labels[0] = True
        found.append(TrainingExample(
            TrainingQuery(f"s{q}", TEXT_QUERY, first_year + q % 3, frozenset({f"p{q}-0"})),
            Candidates([f"p{q}-{i}" for i in range(20)], values), labels.astype(float)))
    return found


SMALL = '{"trees": 5, "leaves": 3, "min_data_in_leaf": 2}'


def write_examples(folder: Path, train_first_year: int) -> tuple[Path, Path]:
    train, dev = folder / "train.npz", folder / "dev.npz"
    write_gathered([Gathered(e) for e in examples(8, train_first_year)], train)
    write_gathered([Gathered(e, e.candidates.ids[:5]) for e in examples(4, 2005)], dev)
    return train, dev


def test_a_gathered_file_round_trips_and_anything_else_is_refused_without_unpickling(
        tmp_path: Path) -> None:
    train, _ = write_examples(tmp_path, 1999)
    again = read_gathered(train)
    original = examples(8, 1999)
    assert [g.example.query for g in again] == [e.query for e in original]
    for read, written in zip(again, original, strict=True):
        assert read.example.candidates.ids == written.candidates.ids
        np.testing.assert_array_equal(read.example.candidates.values,
                                      written.candidates.values)
    (tmp_path / "other.npz").write_bytes(b"not a file of gathered queries")
    with pytest.raises(EvaluationError, match="gather it again"):
        read_gathered(tmp_path / "other.npz")
    with np.load(train) as data:  # gathered with other features
        np.savez(tmp_path / "old.npz", **{k: data[k] for k in data.files if k != "features"},
                 features=np.array(FEATURES[:-1]))
    with pytest.raises(EvaluationError, match="other features"):
        read_gathered(tmp_path / "old.npz")
    # A pickle that would run code when loaded is refused by name, and runs nothing.
    crafted = tmp_path / "crafted.npz"
    marker = tmp_path / "ran"
    crafted.write_bytes(pickle.dumps(Runs(str(marker))))
    with pytest.raises(EvaluationError):
        read_gathered(crafted)
    assert not marker.exists()
    with pytest.raises(SystemExit, match="error: .*gather it again"):
        main(["evaluate", "--train", str(crafted), "--dev", str(crafted)])
    assert not marker.exists()


class Runs:
    """An object whose unpickling would create `path`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (open, (self.path, "w"))


def test_save_ablations_writes_one_described_model_per_row(tmp_path: Path) -> None:
    train, dev = write_examples(tmp_path, 1999)
    folder = tmp_path / "models"
    main(["evaluate", "--train", str(train), "--dev", str(dev), "--save-ablations",
          str(folder), "--save", str(tmp_path / "full"), "--corpus", "synthetic",
          "--before-year", "2003", "--seed", "7", "--held-out-names", "dev.jsonl",
          "--params", SMALL])

    names = ({f"without-{group}" for group in FEATURE_GROUPS} | {"before-new-signals"}
             | {f"before+{group}" for group in NEW_GROUPS})
    assert {path.name for path in folder.iterdir()} == names
    for group, left_out in FEATURE_GROUPS.items():
        models = load_models(folder / f"without-{group}")
        assert models.name == f"without-{group}"
        assert models.forms["text"].features == tuple(f for f in DEFAULT_FEATURES
                                                      if f not in left_out)
    before = load_models(folder / "before-new-signals").forms["text"].features
    assert not {f for group in NEW_GROUPS for f in FEATURE_GROUPS[group]} & set(before)
    for path in folder.iterdir():
        description = load_models(path).forms["text"].description
        assert description["corpus"] == "synthetic" and description["queries"] == 8
        assert description["before_year"] == 2003 and description["seed"] == 7
        assert description["held_out_query_files"] == ["dev.jsonl"]
        assert description["source_year_max"] == 2001 and len(description["sources"]) == 8
    # --save writes the default model: the shipped model's features.
    saved = load_models(tmp_path / "full")
    assert saved.name == "full" and saved.forms["text"].features == DEFAULT_FEATURES


def test_save_ablations_refuses_training_queries_from_the_cut_year_on(tmp_path: Path) -> None:
    train, dev = write_examples(tmp_path, 2002)  # years 2002 to 2004
    with pytest.raises(SystemExit):
        main(["evaluate", "--train", str(train), "--dev", str(dev), "--save-ablations",
              str(tmp_path / "models"), "--before-year", "2003", "--params", SMALL])
    assert not (tmp_path / "models").exists()


def write_models(folder: Path) -> None:
    small = LambdaRankParams(trees=5, leaves=3, min_data_in_leaf=2)
    for name in MODELS:
        features = FEATURES if name == "all-features" else FEATURES[3:]
        description = {"corpus": "hep-th", "before_year": 2003}
        models = train_order_model(examples(60, 2000), name, "hep-th", description,
                                   features, small)
        save_models(models, folder / name)


def dataset(queries: list[BenchQuery]) -> Dataset:
    spec = DatasetSpec("fixture", Path("queries.jsonl"), DatabaseSettings())
    # Planning and scoring read the run store only, never the graph.
    return Dataset(spec, cast(Graph, None), queries, {}, 0, subset_size=2)


def test_plan_runs_each_model_on_every_query_with_both_references(tmp_path: Path) -> None:
    write_models(tmp_path)
    options = Options(systems=("bm25",), order_ablations=tmp_path)
    jobs = plan_jobs([dataset([])], BASE, options)
    walks = main_configs(BASE)
    keys = [job.key for job in jobs]
    assert keys[0] == "bm25"
    assert {walks["learned-order"].key(), walks["previous-default"].key()} <= set(keys)
    ablations = [job for job in jobs if job.config and job.config.order_model]
    assert [Path(job.config.order_model).name for job in ablations
            if job.config and job.config.order_model] == list(MODELS)
    assert [job.key for job in ablations] == [
        walks["learned-order"].key() + f"-model_{name}" for name in MODELS]
    assert all(not job.subset_only and job.phase > 3 for job in ablations)
    assert jobs[-len(ablations):] == ablations
    assert plan_jobs([dataset([])], BASE, Options(systems=("bm25",))) == jobs[:1]


def record(query: BenchQuery, ranking: list[str], model: str | None) -> dict:
    order = {"order": "learned", "model": {"name": model}} if model else {"order": "walk"}
    return {"query_id": query.id,
            **SystemRun(ranking, [1.0] * len(ranking), 0.1, counts={"order": order}
                        ).to_record()}


def test_results_compare_each_model_with_the_shipped_model_and_previous_default(
        tmp_path: Path) -> None:
    folder = tmp_path / "models"
    write_models(folder)
    queries = [BenchQuery(f"q{i}", "text", frozenset({f"r{i}"}), f"s{i}", 2003)
               for i in range(12)]
    filler = [f"x{j}" for j in range(49)]
    store = RunStore(tmp_path / "out" / "runs")
    walks = main_configs(BASE)
    for q in queries:  # the search's own model finds each paper first, the walk eighth
        index = int(q.id[1:])
        store.append("fixture", walks["learned-order"].key(),
                     record(q, [f"r{index}", *filler], "hepth-pre2003" if index else None))
        store.append("fixture", walks["previous-default"].key(),
                     record(q, [*filler[:7], f"r{index}", *filler[7:48]], None))
        store.append("fixture", walks["learned-order"].key() + "-model_all-features",
                     record(q, [f"r{index}", *filler], "all-features"))
        store.append("fixture", walks["learned-order"].key() + "-model_without-walk",
                     record(q, filler, "without-walk"))
    options = Options(systems=("bm25",), order_ablations=folder)

    results = collect_results({"fixture": dataset(queries)}, store, BASE, options, "crase ...")

    data = results["datasets"]["fixture"]
    reference = data["order_ablation_reference"]
    assert reference["models"] == ["hepth-pre2003"] and reference["applied"] == 11
    assert reference["vs_previous_default"]["5"]["recall"]["diff"] == pytest.approx(1.0)
    rows = {row["model"]: row for row in data["order_ablations"]}
    assert list(rows) == list(MODELS)
    full, without = rows["all-features"], rows["without-walk"]
    assert full["applied"] == without["applied"] == 12
    assert full["training"]["corpus"] == "hep-th" and full["training"]["queries"] == 60
    assert full["training"]["before_year"] == 2003
    assert len(without["features"]) == len(FEATURES) - 3
    assert full["metrics"]["recall"][50] == 1.0 and without["metrics"]["recall"][50] == 0.0
    assert full["vs_shipped_model"]["recall"]["diff"] == 0.0
    assert not full["vs_shipped_model"]["recall"]["clear"]
    assert without["vs_shipped_model"]["recall"]["diff"] == pytest.approx(-1.0)
    assert without["vs_shipped_model"]["recall"]["clear"]
    assert without["vs_shipped_model"]["map"]["diff"] == pytest.approx(-1.0)
    assert full["vs_previous_default"]["5"]["recall"]["diff"] == pytest.approx(1.0)
    assert full["vs_previous_default"]["50"]["recall"]["diff"] == 0.0
    assert without["vs_previous_default"]["50"]["recall"]["diff"] == pytest.approx(-1.0)
    assert results["options"]["order_ablations"] == str(folder)
    json.dumps(results, default=str)  # as run_quality writes results.json

    text = write_report(results, tmp_path / "out").read_text()
    section = text[text.index("### Learned order: feature groups removed"):]
    table = [line for line in section.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in table] == [
        "| model", "| the search's own model *", "| all-features", "| without-walk"]
    assert "| -1.0000 [-1.0000, -1.0000] (clear) |" in table[3]
    assert "- `without-walk`: corpus hep-th, 60 queries" in section
    per_query = (tmp_path / "out" / "per_query_fixture.csv").read_text()
    assert "learned order, model without-walk" in per_query


def test_a_set_where_no_model_ordered_a_list_gets_one_sentence(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    write_models(folder)
    queries = [BenchQuery(f"q{i}", "text", frozenset({f"r{i}"}), f"s{i}", 2003)
               for i in range(3)]
    store = RunStore(tmp_path / "out" / "runs")
    walks = main_configs(BASE)
    keys = [walks["learned-order"].key(), walks["previous-default"].key(),
            *(walks["learned-order"].key() + f"-model_{name}" for name in MODELS)]
    for q in queries:  # the walk's or the text's order everywhere
        for key in keys:
            store.append("fixture", key, record(q, [f"r{q.id[1:]}"], None))
    options = Options(systems=("bm25",), order_ablations=folder)
    results = collect_results({"fixture": dataset(queries)}, store, BASE, options, "crase ...")
    text = write_report(results, tmp_path / "out").read_text()
    section = text[text.index("### Learned order: feature groups removed"):]
    assert "No model ordered any of the 3 queries" in section
    body = section.split("\n## ")[0]
    assert "| model |" not in body and "Training data of each model" not in body


def previous_release_file(path: Path, weight: float) -> Path:
    """A one-file linear model as the previous release wrote it (crase-linear-ranker/1)."""
    features = ["cited_by_seeds", "walk_log_rank"]
    path.write_text(json.dumps({
        "format": "crase-linear-ranker/1", "name": path.stem, "form": "text",
        "features": features, "mean": [0.0, 0.0], "scale": [1.0, 1.0],
        "weights": [weight, 0.5], "description": {"corpus": "synthetic"},
        "forms": {"words": {"features": features, "mean": [0.0, 0.0], "scale": [1.0, 1.0],
                            "weights": [1.0, 0.0], "description": {}}}}))
    return path


def test_compare_orders_the_same_candidates_by_each_model_and_pairs_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, dev = write_examples(tmp_path, 1999)
    up = previous_release_file(tmp_path / "up.json", 1.0)
    down = previous_release_file(tmp_path / "down.json", -1.0)
    main(["compare", "--dev", str(dev), "--model", str(up), "--model", str(down)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "dev.npz: 4 queries, 0 ordered by a gate"
    assert lines[1].startswith(f"  {up}: R@5 ") and lines[2].startswith(f"  {down}: R@5 ")
    assert lines[1] != lines[2].replace(str(down), str(up))  # the two orders differ
    # The paired difference is the second model's R@50 less the first's.
    r50 = [float(line.split("R@50 ")[1].split()[0]) for line in lines[1:3]]
    assert lines[3].startswith(f"  {down} - {up}: R@50 {r50[1] - r50[0]:+.3f}")
    with pytest.raises(SystemExit, match="^error: cannot read the order model .*dev.npz"):
        main(["compare", "--dev", str(dev), "--model", str(dev)])
    (tmp_path / "other.json").write_text(json.dumps({"format": "something-else/1"}))
    with pytest.raises(SystemExit, match="neither a crase-order-model/2 model folder nor"):
        main(["compare", "--dev", str(dev), "--model", str(tmp_path / "other.json")])
