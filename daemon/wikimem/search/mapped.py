"""Segment files read straight from whoosh's memory map, not from a copy of it.

whoosh maps each segment file and opens the files inside it (postings, terms, stored passages,
field lengths) as BufferFiles, and a BufferFile copies its whole file into a BytesIO when it is
opened: 90 MB at 10k sources, for a search that reads a few pages of it. The copy is only there
for the few reads made through the file as a stream (a header, a pickled table); the rest slice
the map. Here those reads come from the map too, so opening an index copies nothing and a search
keeps in memory the pages it reads.
"""

from __future__ import annotations

import io
from typing import Any

_INSTALLED = False


class _View(io.RawIOBase):
    """A read-only stream over a memoryview: what BytesIO gives whoosh, without the copy."""

    def __init__(self, buf: Any):
        super().__init__()
        self._buf = buf
        self._size = len(buf)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, pos: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + pos < 0:
            raise ValueError(f"negative seek position {base + pos}")
        self._pos = base + pos
        return self._pos

    def readinto(self, b: Any) -> int:
        chunk = self._buf[self._pos:self._pos + len(b)]
        n = len(chunk)
        b[:n] = chunk
        self._pos += n
        return n


def install() -> None:
    """From now on, this process's whoosh opens segment files without copying them (once)."""
    global _INSTALLED
    if _INSTALLED:
        return
    from whoosh.filedb import compound
    from whoosh.filedb.structfile import BufferFile

    class MappedFile(BufferFile):  # type: ignore[misc]
        def __init__(self, buf: Any, name: str | None = None, onclose: Any = None):
            # BufferFile.__init__ without its BytesIO(buf)
            self._buf = buf
            self._name = name
            self.file = _View(buf)
            self.onclose = onclose
            self.is_real = False
            self.is_closed = False

    compound.BufferFile = MappedFile  # the name CompoundStorage.open_file builds each file with
    _INSTALLED = True
