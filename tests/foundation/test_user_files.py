"""crase/user_files.py: a file a person names is looked at before it is opened and read
with a bound; a device, a FIFO or a folder is refused by what it is, and the commands that
read such files end in one line naming it."""

import io
import os
import threading
from pathlib import Path

import pytest

from crase.api.cli import main
from crase.errors import UserFileNotRegular, UserFileTooLarge
from crase.user_files import BoundedReader, read_user_bytes, read_user_text


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "refs.bib"
    os.mkfifo(path)
    return path


def test_dev_zero_is_refused_by_name_before_a_byte_is_read() -> None:
    with pytest.raises(UserFileNotRegular, match="/dev/zero is a character device"):
        read_user_bytes(Path("/dev/zero"), "the reference file", 1_000)


def test_a_fifo_and_a_folder_are_refused_without_waiting_for_a_writer(
        fifo: Path, tmp_path: Path) -> None:
    # Opened, a FIFO would block until someone writes: the refusal must come first.
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: outcome.append(
        pytest.raises(UserFileNotRegular, read_user_bytes, fifo, "the draft", 100).value))
    reader.start()
    reader.join(timeout=5)
    assert not reader.is_alive(), "reading the FIFO blocked"
    assert "is a FIFO (named pipe), not a regular file" in str(outcome[0])
    with pytest.raises(UserFileNotRegular, match="is a folder"):
        read_user_text(tmp_path, "the draft", 100)


def test_a_file_over_its_limit_is_refused_by_its_size_and_one_at_it_is_read(
        tmp_path: Path) -> None:
    path = tmp_path / "draft.txt"
    path.write_bytes(b"x" * 100)
    assert read_user_text(path, "the draft", 100) == "x" * 100
    with pytest.raises(UserFileTooLarge, match="has 100 bytes, more than the 99 allowed"):
        read_user_text(path, "the draft", 99)
    with pytest.raises(FileNotFoundError):
        read_user_text(tmp_path / "missing.txt", "the draft", 99)


def test_a_file_that_grows_past_its_limit_while_read_is_refused(tmp_path: Path) -> None:
    # What the size said before the read does not bound it: the read stops one byte past.
    bounded = io.BufferedReader(BoundedReader(io.BytesIO(b"y" * 5_000),  # type: ignore[arg-type]
                                              tmp_path / "f", "the draft", 4_096))
    with pytest.raises(UserFileTooLarge, match="grew while it was read"):
        bounded.read()
    exact = io.BufferedReader(BoundedReader(io.BytesIO(b"y" * 4_096),  # type: ignore[arg-type]
                                            tmp_path / "f", "the draft", 4_096))
    assert len(exact.read()) == 4_096


@pytest.fixture
def no_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings that reach no database: a command must refuse its file before it connects."""
    monkeypatch.setenv("CRASE_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("CRASE_DATABASE__URI", "bolt://127.0.0.1:9")


@pytest.mark.parametrize("command", [
    ["search", "black hole entropy", "--from-file", "{file}"],
    ["citation-gaps", "{file}"],
    ["citation-gaps", "{draft}", "--bib", "{file}"],
    ["evolution", "entropy", "--compare", "{file}"],
    ["code-extract", "{file}"],
    ["bench", "entailment", "--pairs", "{file}", "--scorer", "classifier"],
    ["train-entailment", "--out", "{out}", "--nli", "{nli}", "--mine", "{file}"],
])
def test_every_command_refuses_dev_zero_and_a_fifo_in_one_line(
        command: list[str], fifo: Path, tmp_path: Path, no_database: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text("We follow the holographic bound.\n")
    nli = tmp_path / "nli"
    for relative in ("scinli/train_1.tsv", "scinli/train_2.tsv", "scinli/dev.csv",
                     "mscinli/dev.csv"):
        (nli / relative).parent.mkdir(parents=True, exist_ok=True)
        separator = "\t" if relative.endswith(".tsv") else ","
        (nli / relative).write_text(separator.join(["id", "sentence1", "sentence2", "label"])
                                    + "\n" + separator.join(["1", "A.", "B.", "neutral"]) + "\n")
    zero, pipe = Path("/dev/zero"), fifo
    suffix = {"code-extract": ".txt", "bench": ".csv"}.get(command[0])
    if suffix:  # a command that reads by the name's suffix: a link named so
        zero, pipe = tmp_path / f"zero{suffix}", tmp_path / f"pipe{suffix}"
        zero.symlink_to("/dev/zero")
        pipe.symlink_to(fifo)
    for named, kind in ((zero, "a character device"), (pipe, "a FIFO (named pipe)")):
        argv = [part.format(file=named, draft=draft, out=tmp_path / "m.json", nli=nli)
                for part in command]
        assert main(argv) == 2
        error = capsys.readouterr().err
        assert f"{named} is {kind}, not a regular file" in error
        assert error.count("\n") == 1 and "Traceback" not in error


def test_validation_sheets_and_keys_are_refused_by_name(fifo: Path) -> None:
    from crase.research.edge_validation import read_json, read_sheet

    with pytest.raises(UserFileNotRegular, match="/dev/zero is a character device"):
        read_sheet(Path("/dev/zero"))
    with pytest.raises(UserFileNotRegular, match="is a FIFO"):
        read_json(fifo, "give the folder `crase validate export` wrote")
