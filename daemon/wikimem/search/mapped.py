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


PICKLE_READ = 1024  # bytes copied for a pickle at first: a block's header takes about a hundred


def _load_pickle(buf: Any, view: _View) -> Any:
    """The pickle at the view's position, the view moved past it, as pickle.load(view) would."""
    import pickle

    start = view.tell()
    size = PICKLE_READ
    while True:
        chunk = io.BytesIO(buf[start:start + size])
        try:
            got = pickle.load(chunk)
        except Exception:
            if start + size >= len(buf):
                view.seek(start)
                return pickle.load(view)  # as whoosh would: its error, if any
            size *= 16
            continue
        view.seek(start + chunk.tell())
        return got


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

        def read_pickle(self) -> Any:
            # each block of postings starts with a small pickle, which pickle.load reads from a
            # stream a few bytes a call (twenty calls into _View for one block); here it reads
            # from a copy of the bytes it may need, and the stream moves on by what it read
            return _load_pickle(self._buf, self.file)


    compound.BufferFile = MappedFile  # the name CompoundStorage.open_file builds each file with
    _INSTALLED = True
