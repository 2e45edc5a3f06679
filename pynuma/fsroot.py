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
    from typing import Iterable, List, Optional, Tuple

from . import _impl

_fsread = _impl.select("fsread")
_read_many_text = _fsread.read_many_text
_list_names = _fsread.list_names
_group_walk = _fsread.group_walk
_SCAN_IS_NATIVE = _impl.is_native("fsread")

MISSING, FILE, DIRECTORY = 0, 1, 2


def _scan_threads() -> int:
    """``PYNUMA_SCAN_THREADS``: how many threads the discovery scan may use (0 or unset: its own choice)."""
    value = os.environ.get("PYNUMA_SCAN_THREADS", "")
    return int(value) if value.isdigit() else 0


#: read once, when this module is imported
SCAN_THREADS = _scan_threads()


class FsRoot:
    """A directory playing the part of ``/`` for every read pynuma makes.

    ``record=True`` keeps the list of files read and directories listed
    (the benchmark's floor program replays them).
    """

    def __init__(self, root: str = "/", record: bool = False) -> None:
        self.root = os.path.abspath(root)
        self.is_host = self.root == "/"
        try:
            self._fd = _fsread.open_root(self.root)
        except OSError as err:
            from .errors import InputError

            raise InputError(f"root {root}: {err.strerror}") from err
        self._owned = True
        self.files_read: Optional[List[str]] = [] if record else None
        self.dirs_listed: Optional[List[str]] = [] if record else None

    @classmethod
    def borrow(cls, fd: int, record: bool = False) -> "FsRoot":
        """An ``FsRoot`` over a root directory fd someone else opened (and closes)."""
        self = cls.__new__(cls)
        self.root = f"/proc/self/fd/{fd}"
        self.is_host = False
        self._fd = fd
        self._owned = False
        self.files_read = [] if record else None
        self.dirs_listed = [] if record else None
        return self

    #: ``(lock, outcome)`` of a scan started by :meth:`prefetch_scan` and not yet taken
    _prefetched = None

    def close(self) -> None:
        self._take_prefetched()  # a helper thread may still be reading below the fd
        if self._fd >= 0:
            if self._owned:
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
        if self.files_read is not None:
            self.files_read.append(path)
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
        if self.files_read is not None:
            self.files_read.extend(paths)
        # absolute paths as they are: the reader resolves them inside the root
        return _read_many_text(self._fd, paths, limit)

    def group_walk(self, prefix: str, suffix: str, names: tuple, mask_index: int, reported: int,
                   remaining: int) -> "Tuple[List[Tuple[int, List[Optional[str]], Optional[int]]], bool]":
        """Per-group files read once per group, lowest CPU first: ``(entries, complete)``.

        The lowest CPU of ``remaining`` (bitmap) leads; its files are
        ``prefix + cpu + suffix + name`` for each of ``names``;
        ``names[mask_index]`` is a cpumask whose reported, unplaced CPUs join
        it.  ``entries`` is ``[(leader, texts, group bitmap)]``; ``complete``
        is False when the last leader's mask was missing or bad (its group is
        ``None``; the walk stopped there).
        """
        entries, complete = _group_walk(self._fd, prefix, suffix, names, mask_index, reported, remaining)
        if self.files_read is not None:
            self.files_read.extend(f"{prefix}{cpu}{suffix}{name}" for cpu, _texts, _group in entries
                                   for name in names)
        return entries, complete

    def scan(self, reported: "Optional[int]", mems: "Optional[int]"):
        """A regular machine's whole topology in one pass: ``(status, answer, pre)``.

        See ``pynuma.discover._regular`` and ``pynuma._native_fsread.scan``:
        ``reported`` ``None`` reads the CPU sets and resolves the cpuset
        cgroup too; status ``"ok"`` or ``"irregular"`` (use the general
        path); ``pre`` the texts read before the scan proper, for the
        general path to reuse.
        """
        if self._prefetched is not None and reported is None and mems is None:
            ok, value = self._take_prefetched()
            if not ok:
                raise value
            return value
        return self._scan_now(reported, mems)

    def _scan_now(self, reported: "Optional[int]", mems: "Optional[int]"):
        status, answer, pre, recorded = _fsread.scan(self._fd, reported, mems, not self.is_host,
                                                     self.files_read is not None, SCAN_THREADS)
        if recorded is not None:
            self.files_read.extend(recorded[0])
            self.dirs_listed.extend(recorded[1])
        return status, answer, pre

    def _may_have_cpus(self, count: int) -> bool:
        """Whether the machine may have ``count`` CPUs or more, by the first of ``cpu/{possible,present,online}``
        it has (a cpulist ascends: its last number is the highest); True when it has none of them (an old
        kernel's tree, which discovery sizes by listing the CPU directories)."""
        for name in ("possible", "present", "online"):
            text = self.read_optional("/sys/devices/system/cpu/" + name)
            if text is not None:
                last = text.strip().replace(",", "-").rpartition("-")[2]
                return last.isdigit() and last.isascii() and int(last) + 1 >= count
        return True

    def prefetch_scan(self, min_cpus: int = 16) -> bool:
        """Start ``scan(None, None)`` on a helper thread; the next such call takes its answer.

        The native scan reads without holding the GIL, so the caller can
        import the code that will use the answer meanwhile (``pynuma
        topology`` does: 1.5-3 ms less on a 128-CPU dump, even on two
        cores).  Returns False, starting nothing, on the pure path (where the
        scan would only compete with the caller for the GIL) and when
        ``cpu/possible`` (else ``present``, else ``online``) names fewer than
        ``min_cpus`` CPUs (a small machine's scan costs less than handing it
        to a thread).
        """
        if not _SCAN_IS_NATIVE or self._prefetched is not None or self._fd < 0:
            return False
        if not self._may_have_cpus(min_cpus):
            return False
        import _thread  # built in, and already loaded by the import system

        done, running = _thread.allocate_lock(), _thread.allocate_lock()
        done.acquire()
        running.acquire()
        outcome: list = []

        def work() -> None:
            running.release()  # from here the caller gets the GIL back as soon as the scan drops it
            try:
                outcome.append((True, self._scan_now(None, None)))
            except BaseException as err:  # handed to whoever takes the answer
                outcome.append((False, err))
            finally:
                done.release()

        self._prefetched = (done, outcome)
        _thread.start_new_thread(work, ())
        running.acquire()  # a new thread would otherwise wait for the GIL while the caller imports
        return True

    def _take_prefetched(self):
        """``(ok, answer or exception)`` of the prefetched scan, after waiting for it; None if none."""
        prefetched = self._prefetched
        if prefetched is None:
            return None
        done, outcome = prefetched
        with done:  # interrupted (Ctrl-C), it stays pending: close() will not pull the fd from under it
            self._prefetched = None
        return outcome[0]

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
        if self.dirs_listed is not None:
            self.dirs_listed.append(path)
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
