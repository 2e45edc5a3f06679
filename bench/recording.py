"""A recording reader for the benchmarks: an ``FsRoot`` that keeps what it read.

The discovery benchmark's floor replays exactly the I/O one discovery did;
this reader notes it, in order, repeats kept::

    with RecordingFsRoot(dump) as fs:
        pynuma.discover(fs)
    fs.entries        # [("F", limit, path) | ("D", 0, path) | ("K", 0, path)]
    fs.files_read, fs.dirs_listed
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

from pynuma.fsroot import FsRoot


class RecordingFsRoot(FsRoot):
    """:class:`~pynuma.fsroot.FsRoot` noting every file read (``F``, with its size limit), directory
    listed (``D``) and kind looked up (``K``), by absolute path."""

    def __init__(self, root: str = "/") -> None:
        super().__init__(root)
        self.entries: List[Tuple[str, int, str]] = []

    @property
    def files_read(self) -> List[str]:
        return [path for kind, _limit, path in self.entries if kind == "F"]

    @property
    def dirs_listed(self) -> List[str]:
        return [path for kind, _limit, path in self.entries if kind == "D"]

    def read_bytes(self, path: str, limit: int = 1 << 20) -> bytes:
        self.entries.append(("F", limit, path))
        return super().read_bytes(path, limit)

    def read_many(self, paths: Iterable[str], limit: int = 1 << 16) -> List[Optional[str]]:
        paths = list(paths)
        self.entries.extend(("F", limit, p) for p in paths)
        return super().read_many(paths, limit)

    def listdir(self, path: str) -> List[str]:
        self.entries.append(("D", 0, path))
        return super().listdir(path)

    def kind(self, path: str) -> int:
        self.entries.append(("K", 0, path))
        return super().kind(path)
