"""``FsRoot``: the one reader of ``/sys``, ``/proc`` and cgroupfs.

Code writes readable absolute paths (``"/sys/devices/system/node"``) and the
root re-bases them, so every feature works the same on the live host
(``root="/"``) and on a saved dump of another machine.  Reads never escape
the root (``..`` and absolute symlinks stay inside it).

>>> fs = FsRoot("/")
>>> fs.read_optional("/sys/devices/system/cpu/online")  # doctest: +SKIP
'0-1\\n'
"""
import os
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs more than discovery's start-up budget
    from typing import Iterable, List, Optional

from . import _impl

_fsread = _impl.select("fsread")
_read_many_text = _fsread.read_many_text
_list_names = _fsread.list_names

MISSING, FILE, DIRECTORY = 0, 1, 2


class FsRoot:
    """A directory playing the part of ``/`` for every read pynuma makes."""

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root)
        self.is_host = self.root == "/"
        try:
            self._fd = _fsread.open_root(self.root)
        except OSError as err:
            from .errors import InputError

            raise InputError(f"root {root}: {err.strerror}") from err

    def close(self) -> None:
        if self._fd >= 0:
            _fsread.close_root(self._fd)
            self._fd = -1

    def __enter__(self) -> "FsRoot":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"FsRoot({self.root!r})"

    @property
    def root_fd(self) -> int:
        """The root's open directory fd, for native readers that ``openat`` below it."""
        return self._fd

    # -- names --------------------------------------------------------
    def host_path(self, path: str) -> str:
        """Where ``path`` really is, for messages (``/dump/sys/...``)."""
        return path if self.is_host else self.root + "/" + path.lstrip("/")

    @staticmethod
    def _rel(path: str) -> str:
        rel = path.lstrip("/")
        return rel or "."

    # -- reads --------------------------------------------------------
    def read_bytes(self, path: str, limit: int = 1 << 20) -> bytes:
        """Bytes of a file; ``OSError`` when it cannot be read."""
        return _fsread.read_at(self._fd, self._rel(path), limit)

    def read_text(self, path: str) -> str:
        """Text of a file (undecodable bytes replaced); ``OSError`` when unreadable."""
        return self.read_bytes(path).decode("utf-8", "replace")

    def read_optional(self, path: str) -> "Optional[str]":
        """Text of a file, or ``None`` when it is missing or unreadable."""
        try:
            return self.read_text(path)
        except OSError:
            return None

    def read_many(self, paths: "Iterable[str]", limit: int = 1 << 16) -> "List[Optional[str]]":
        """Texts of many small files (at most ``limit`` bytes each) in one native call; ``None`` where one failed."""
        if type(paths) is not list:
            paths = list(paths)
        # absolute paths as they are: the reader resolves them inside the root
        return _read_many_text(self._fd, paths, limit)

    def read_required(self, path: str) -> str:
        """Text of a file, or a :class:`PynumaError` naming it."""
        try:
            return self.read_text(path)
        except OSError as err:
            from .errors import from_oserror

            raise from_oserror(err, self.host_path(path)) from err

    def parse(self, path: str, parser, default=None):
        """``parser(text)`` of a file; ``default`` when missing; ``ParseError`` naming the file on bad text."""
        text = self.read_optional(path)
        if text is None:
            return default
        try:
            return parser(text)
        except ValueError as err:
            from .errors import ParseError

            raise ParseError(self.host_path(path), str(err)) from None

    def listdir(self, path: str) -> "List[str]":
        """Sorted names in a directory; ``[]`` when it is missing or unreadable."""
        names = _list_names(self._fd, path)  # absolute is fine: resolved inside the root
        return [] if type(names) is int else sorted(names)

    def kind(self, path: str) -> int:
        """``MISSING``, ``FILE`` or ``DIRECTORY``."""
        return _fsread.kind_at(self._fd, self._rel(path))

    def exists(self, path: str) -> bool:
        return self.kind(path) != MISSING

    def _fstat_with(self, path: str, fstat):
        """``fstat(fd)`` of ``path`` resolved inside the root (a dump's symlink never reaches the host)."""
        if self.is_host:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        else:
            # The pure reader's no-escape walk; one call per command, not a hot path.
            from ._pure_fsread import _open

            fd = _open(self._fd, self._rel(path), os.O_PATH)
        try:
            return fstat(fd)
        finally:
            os.close(fd)

    def statvfs(self, path: str) -> "os.statvfs_result":
        """``statvfs`` of the filesystem holding ``path`` under the root; ``OSError`` when missing."""
        return self._fstat_with(path, os.fstatvfs)

    def stat(self, path: str) -> "os.stat_result":
        """``stat`` of ``path`` under the root, symlinks resolved inside it; ``OSError`` when missing."""
        return self._fstat_with(path, os.fstat)

    def isdir(self, path: str) -> bool:
        return self.kind(path) == DIRECTORY

    # -- writes -------------------------------------------------------
    def write_text(self, path: str, text: str) -> None:
        """Write to an existing file under the root (sysfs/cgroupfs knobs).

        Raises the matching :class:`PynumaError` (``AccessDenied`` when not
        permitted) naming the file.
        """
        try:
            _fsread.write_at(self._fd, self._rel(path), text.encode())
        except OSError as err:
            from .errors import from_oserror

            raise from_oserror(err, self.host_path(path)) from err

    def require_host(self, what: str) -> None:
        """Refuse live-host side effects while reading an alternate root."""
        if not self.is_host:
            from .errors import FakeRootRefused

            raise FakeRootRefused(f"{what} acts on the live host, but the root is {self.root}")
