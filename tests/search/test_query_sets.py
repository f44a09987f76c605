"""The query-set file: lines without the newer fields read as before, and a line the
benchmarks cannot read is refused with its file, line and the field to fix. No database."""

import json
from pathlib import Path

import pytest

from crase.errors import EvaluationError
from crase.search.query_sets import read_query_file


def test_old_query_lines_read_as_before_and_new_fields_are_checked(tmp_path: Path) -> None:
    plain = {"query_id": "q1", "query": "Strings on pp-waves. We study strings.",
             "source_paper_id": "s", "relevant_ids": ["a", "b"], "source_year": 2003}
    seeded = {"query_id": "q2", "query": "", "source_paper_id": "s",
              "relevant_ids": ["b"], "seed_ids": ["a"]}
    path = tmp_path / "queries.jsonl"
    path.write_text(json.dumps(plain) + "\n\n" + json.dumps(seeded) + "\n")
    assert read_query_file(path) == [plain, seeded]
    bad = {"an empty query without seed_ids": {**plain, "query": "  "},
           "seed_ids naming the source": {**seeded, "seed_ids": ["a", "s"]},
           "seed_ids not a list of ids": {**seeded, "seed_ids": "a"},
           "a query that is not a string": {**plain, "query": None},
           "no relevant_ids": {key: value for key, value in plain.items()
                               if key != "relevant_ids"}}
    for why, row in bad.items():
        path.write_text(json.dumps(plain) + "\n" + json.dumps(row) + "\n")
        with pytest.raises(EvaluationError, match=r"queries.jsonl:2: ") as err:
            read_query_file(path)
        assert "give" in str(err.value) or "remove" in str(err.value), why
