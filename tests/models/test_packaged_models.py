"""The packaged models: their parts are found from package metadata, joined in order and
held to their GGUF header before anything serves them. The header reader is held to small
GGUF files written here with llama.cpp's own gguf package (its writer is the reference); the
joined real models are checked where `make local-llm` installed them."""

from importlib import metadata
from pathlib import Path

import gguf
import pytest

from crase.errors import LocalModelUnavailable
from crase.models.packaged_models import (
    MODELS,
    PackagedModel,
    assemble,
    check_gguf,
    packaged_model,
    part_paths,
)

QWEN = MODELS["qwen2.5-coder-1.5b"]
CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{% endfor %}"


def write_gguf(path: Path, architecture: str = "qwen2", size: str = "1.5B", file_type: int = 15,
               template: str | None = CHATML) -> Path:
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_size_label(size)
    writer.add_file_type(file_type)
    if template is not None:
        writer.add_chat_template(template)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_file_with_the_expected_header_passes(tmp_path: Path) -> None:
    header = check_gguf(write_gguf(tmp_path / "ok.gguf"), QWEN)
    assert header["general.architecture"] == "qwen2" and header["general.file_type"] == 15


@pytest.mark.parametrize(("fields", "named"), [
    ({"architecture": "llama"}, "general.architecture is 'llama'"),
    ({"size": "0.5B"}, "general.size_label is '0.5B'"),
    ({"file_type": 7}, "general.file_type is 7"),
    ({"template": None}, "no ChatML chat template"),
])
def test_a_wrong_header_is_refused_by_name(tmp_path: Path, fields: dict[str, object],
                                           named: str) -> None:
    path = write_gguf(tmp_path / "wrong.gguf", **fields)  # type: ignore[arg-type]
    with pytest.raises(LocalModelUnavailable, match=named):
        check_gguf(path, QWEN)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "part01.bin"
    path.write_bytes(b"\x00" * 4096)
    with pytest.raises(LocalModelUnavailable, match="not a readable GGUF file"):
        check_gguf(path, QWEN)


def test_an_unknown_name_lists_the_choices() -> None:
    with pytest.raises(LocalModelUnavailable, match="qwen2.5-coder-1.5b"):
        packaged_model("qwen-72b")


def test_a_missing_part_package_is_named_with_the_install_command() -> None:
    missing = PackagedModel("qwen2.5-coder-1.5b", "x", ("crase-no-such-part1",), "0.1",
                            "data/part*.bin", "qwen2", "1.5B", 15, "", None, "")
    with pytest.raises(LocalModelUnavailable,
                       match=r"crase-no-such-part1 of .*`make local-llm`"):
        part_paths(missing)


def installed(model: PackagedModel) -> bool:
    try:
        return all(metadata.distribution(name) for name in model.distributions)
    except metadata.PackageNotFoundError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"])
def test_the_packaged_parts_join_into_the_published_file(name: str, tmp_path: Path) -> None:
    model = MODELS[name]  # type: ignore[index]
    if not installed(model):
        pytest.skip(f"{name} is not installed (make local-llm)")
    path = assemble(model, tmp_path)
    assert path.stat().st_size == sum(part.stat().st_size for part in part_paths(model))
    check = path.with_name(path.name + ".check.json").read_text()
    assert model.sha256 in check and '"general.size_label": "' + model.size_label in check
    assert not list(tmp_path.glob("*.partial"))
