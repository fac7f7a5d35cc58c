"""Reading a user's file without waiting or swelling (docs/honesty.md, "Hostile input"): the
one place that opens model, query, spec and torch files for reading.

A FIFO opened for reading waits forever for a writer, and /dev/zero never ends, so a file is
opened without blocking, checked to be a regular file by its open descriptor (no race with a
rename), and read up to a size limit.
"""

from __future__ import annotations

import os
import stat

__all__ = ["NotARegularFile", "FileTooLarge", "read_regular"]


class NotARegularFile(ValueError):
    """A FIFO, device or directory where a file is read."""


class FileTooLarge(ValueError):
    """A file above the size limit of its reader."""


def read_regular(path, what: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` bytes when given).
    :class:`NotARegularFile` / :class:`FileTooLarge` name it as "WHAT file 'PATH'";
    FileNotFoundError and other OSErrors of opening it pass as they are."""
    name = repr(str(path))
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(f"{what} file {name} is not a regular file (a FIFO, device or "
                                  f"directory); give a file")
        if limit is not None and st.st_size > limit:
            raise FileTooLarge(f"{what} file {name} has {st.st_size} bytes, above the limit of "
                               f"{limit} ({limit // 2 ** 20} MiB); give a smaller file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read() if limit is None else f.read(limit + 1)
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise FileTooLarge(f"{what} file {name} is above the limit of {limit} bytes")
    return data
