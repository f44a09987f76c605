"""Files a person names on the command line (a reference list, a draft, a document, a
benchmark's pairs, training data): looked at before they are opened, and read with a bound.

A name may point anywhere: `/dev/zero` never ends, a FIFO blocks the open until someone
writes to it, a directory or a socket is no text. So the path is checked with `stat` (which
opens nothing) and anything but a regular file is refused by what it is
(UserFileNotRegular); a regular file over its limit is refused by its size before a byte is
read (UserFileTooLarge); and the read itself stops one byte past the limit, so a file that
grows while it is read (or a /proc file that says it has 0 bytes) is refused too, never
held whole. Errors of the file system itself (no such file, no permission) stay OSError for
the caller, which knows what the file was for.
"""

import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

from crase.errors import UserFileNotRegular, UserFileTooLarge

# What each kind of file that is not a regular file is called in a refusal.
FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
              (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
              (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    return next((name for test, name in FILE_KINDS if test(mode)), "not a regular file")


def check_user_file(path: Path, what: str, max_bytes: int) -> int:
    """The size of the regular file at `path` (links followed), or the named refusal."""
    mode = os.stat(path)
    if not stat.S_ISREG(mode.st_mode):
        raise UserFileNotRegular(f"{what} {path} is {file_kind(mode.st_mode)}, not a regular "
                                 "file; give the path of a file")
    if mode.st_size > max_bytes:
        raise too_large(path, what, max_bytes, f"has {mode.st_size:,} bytes")
    return mode.st_size


def too_large(path: Path, what: str, max_bytes: int, size: str) -> UserFileTooLarge:
    return UserFileTooLarge(f"{what} {path} {size}, more than the {max_bytes:,} allowed; "
                            "give a smaller file")


class BoundedReader(io.RawIOBase):
    """A file's bytes, refusing (UserFileTooLarge) once more than `max_bytes` are read."""

    def __init__(self, raw: BinaryIO, path: Path, what: str, max_bytes: int) -> None:
        self.raw, self.path, self.what, self.max_bytes = raw, path, what, max_bytes
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "bytearray | memoryview") -> int:  # type: ignore[override]
        view = memoryview(buffer)
        # One byte past the limit is asked for, to tell a file of exactly the limit from one over.
        wanted = min(len(view), self.max_bytes + 1 - self.count)
        data = self.raw.read(wanted) if wanted > 0 else b""
        self.count += len(data)
        if self.count > self.max_bytes:
            raise too_large(self.path, self.what, self.max_bytes, "grew while it was read")
        view[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_user_file(path: Path, what: str, max_bytes: int) -> BinaryIO:
    """A buffered binary stream of the regular file at `path` that refuses to read past
    `max_bytes`; the file is checked before it is opened (see the module's docstring)."""
    check_user_file(path, what, max_bytes)
    # O_NONBLOCK: should the path become a FIFO between the check and the open, the open
    # returns at once instead of waiting for a writer; the check below refuses it.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    raw = os.fdopen(descriptor, "rb", buffering=0)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise UserFileNotRegular(f"{what} {path} is {file_kind(mode)}, not a regular "
                                     "file; give the path of a file")
        os.set_blocking(descriptor, True)
    except BaseException:
        raw.close()
        raise
    return io.BufferedReader(BoundedReader(raw, path, what, max_bytes))


def read_user_bytes(path: Path, what: str, max_bytes: int) -> bytes:
    """Every byte of the regular file at `path`, at most `max_bytes` of them."""
    with open_user_file(path, what, max_bytes) as handle:
        return handle.read()


def read_user_text(path: Path, what: str, max_bytes: int, encoding: str = "utf-8") -> str:
    """The text of the regular file at `path` (at most `max_bytes` bytes); a
    UnicodeDecodeError for text that is not in `encoding`."""
    return read_user_bytes(path, what, max_bytes).decode(encoding)
