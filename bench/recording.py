"""A recording reader for the benchmarks: an ``FsRoot`` that keeps what it read.

The discovery benchmark's floor replays exactly the files discovery read and
the directories it listed; this reader notes them (in order, repeats kept)::

    with RecordingFsRoot(dump) as fs:
        pynuma.discover(fs)
    fs.files_read, fs.dirs_listed
"""
from __future__ import annotations

from typing import Iterable, List, Optional

from pynuma.fsroot import FsRoot


class RecordingFsRoot(FsRoot):
    """:class:`~pynuma.fsroot.FsRoot` noting every file read and directory listed (absolute paths)."""

    def __init__(self, root: str = "/") -> None:
        super().__init__(root)
        self.files_read: List[str] = []
        self.dirs_listed: List[str] = []

    def read_bytes(self, path: str, limit: int = 1 << 20) -> bytes:
        self.files_read.append(path)
        return super().read_bytes(path, limit)

    def read_many(self, paths: Iterable[str], limit: int = 1 << 16) -> List[Optional[str]]:
        paths = list(paths)
        self.files_read.extend(paths)
        return super().read_many(paths, limit)

    def listdir(self, path: str) -> List[str]:
        self.dirs_listed.append(path)
        return super().listdir(path)
