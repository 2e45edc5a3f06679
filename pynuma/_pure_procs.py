"""Pure-Python twin of :mod:`pynuma._native_procs` (see native/pn_procs.c).

Same answer for every tree, limit for limit: files are opened below the
root by the pure reader's no-escape walk, ``O_NONBLOCK``, regular files
only; ``numa_maps`` is streamed so memory stays bounded.
"""
from __future__ import annotations

import errno
import os
import stat

from ._pure_fsread import _open

STAT, STATUS, MAPS, THREADS = 1, 2, 4, 8

_TEXT_LIMIT = 1 << 20
_MAPS_LIMIT = 256 << 20
_LINE_MAX = 65536
_POLICY_MAX = 256
_POLICIES_MAX = 64
_CLASSES = 16
_NODES = 1024
_PAGES_MAX = (1 << 36) - 1
_PAGE_KB_MAX = (1 << 32) - 1
_THREADS_MAX = 1 << 22
_MAX_ID = (1 << 22) - 1
_READ = 65536
_KEY_PAGE = b"kernelpagesize_kB="
_KEY_ALLOWED = b"Cpus_allowed_list:"


def limits() -> dict:
    """The reader's bounds (shared with the native reader)."""
    return {"text": _TEXT_LIMIT, "maps": _MAPS_LIMIT, "line": _LINE_MAX, "policy": _POLICY_MAX,
            "policies": _POLICIES_MAX, "classes": _CLASSES, "nodes": _NODES, "pages": _PAGES_MAX,
            "page_kb": _PAGE_KB_MAX, "threads": _THREADS_MAX}


def _digits(b: bytes, limit: int) -> int:
    """``b`` as a number no larger than ``limit``; -1 when not all ASCII digits, empty or too large."""
    if not b or not b.isdigit():
        return -1
    b = b.lstrip(b"0") or b"0"
    if len(b) > 20:  # beyond any limit (and int() refuses very long digit strings)
        return -1
    value = int(b)
    return value if value <= limit else -1


def _open_regular(rootfd: int, path: str) -> int:
    fd = _open(rootfd, path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_text(rootfd: int, path: str):
    """Bytes of ``path`` (at most the text limit), or a negative errno."""
    try:
        fd = _open_regular(rootfd, path)
    except OSError as err:
        return -(err.errno or errno.EIO)
    try:
        chunks, total = [], 0
        while total < _TEXT_LIMIT:
            chunk = os.read(fd, min(65536, _TEXT_LIMIT - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    except OSError as err:
        return -(err.errno or errno.EIO)
    finally:
        os.close(fd)


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


class _Maps:
    """Counts of one process's numa_maps lines (the rules of native/pn_procs.c, maps_line)."""

    def __init__(self) -> None:
        self.classes: dict = {}   # (page_kb, huge) -> {node: pages}, in order of first use
        self.policies: dict = {}  # word -> lines, in order of first use
        self.lines = 0
        self.bad = 0

    def line(self, line: bytes) -> None:
        if len(line) > _LINE_MAX:
            self.bad += 1
            return
        words = line.split()
        if not words:
            return
        if len(words) == 1 or len(words[1]) > _POLICY_MAX:
            self.bad += 1
            return
        policy, rest = words[1], words[2:]
        # two kernel mode names hold a space: "prefer (many)" and "weighted interleave"
        if rest and (policy == b"weighted" or rest[0].startswith(b"(")):
            policy, rest = policy + b" " + rest[0], rest[1:]
            if len(policy) > _POLICY_MAX:
                self.bad += 1
                return
        page_kb, huge, pairs = 0, 0, []
        for w in rest:
            if w == b"huge":
                huge = 1
            elif w.startswith(_KEY_PAGE):
                page_kb = _digits(w[len(_KEY_PAGE):], _PAGE_KB_MAX)
                if page_kb < 0:
                    self.bad += 1
                    return
            elif len(w) >= 2 and w[0] == 0x4E and 0x30 <= w[1] <= 0x39:  # N<digit>
                node_text, eq, pages_text = w[1:].partition(b"=")
                node = _digits(node_text, _NODES - 1) if eq else -1
                pages = _digits(pages_text, _PAGES_MAX) if eq else -1
                if node < 0 or pages < 0:
                    self.bad += 1
                    return
                pairs.append((node, pages))
        key = (page_kb, huge)
        if key not in self.classes and len(self.classes) == _CLASSES:
            self.bad += 1
            return
        # bytes: two words that decode alike are still two words
        if policy in self.policies or len(self.policies) < _POLICIES_MAX:
            self.policies[policy] = self.policies.get(policy, 0) + 1
        nodes = self.classes.setdefault(key, {})
        for node, pages in pairs:
            nodes[node] = nodes.get(node, 0) + pages
        self.lines += 1

    def counts(self) -> list:
        return [(kb, huge, node, nodes[node]) for (kb, huge), nodes in self.classes.items()
                for node in sorted(nodes) if nodes[node]]


def _read_maps(rootfd: int, path: str):
    """``(rc, lines, bad, counts, policies)`` of a numa_maps file, streamed."""
    maps = _Maps()
    try:
        fd = _open_regular(rootfd, path)
    except OSError as err:
        return -(err.errno or errno.EIO), 0, 0, [], []
    rc, total, pending, skipping = 0, 0, b"", False
    try:
        while True:
            chunk = os.read(fd, min(_READ, _MAPS_LIMIT + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            truncated = total > _MAPS_LIMIT
            if truncated:
                chunk = chunk[:-1]
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for line in lines:
                if skipping:
                    skipping = False
                    maps.bad += 1
                else:
                    maps.line(line)
            if truncated:
                rc = -errno.EFBIG
                break
            if skipping or len(pending) > _LINE_MAX:
                skipping, pending = True, b""
    except OSError as err:
        return -(err.errno or errno.EIO), 0, 0, [], []
    finally:
        os.close(fd)
    if rc == 0 and skipping:
        maps.bad += 1
    elif rc == 0 and pending:
        maps.line(pending)
    return rc, maps.lines, maps.bad, maps.counts(), [(_text(w), n) for w, n in maps.policies.items()]


def _processor(text: bytes) -> int:
    """Field 39 of a stat text (the 37th word after the last ``)``), or -1."""
    at = text.rfind(b")")
    if at < 0:
        return -1
    words = text[at + 1:].split()
    return _digits(words[36], _MAX_ID) if len(words) > 36 else -1


def _allowed(text: bytes):
    """The value of a status text's ``Cpus_allowed_list:`` line, or ``-ENOENT``."""
    if text.startswith(_KEY_ALLOWED):
        at = 0
    else:
        at = text.find(b"\n" + _KEY_ALLOWED)
        if at < 0:
            return -errno.ENOENT
        at += 1
    start = at + len(_KEY_ALLOWED)
    end = text.find(b"\n", start)
    value = text[start:] if end < 0 else text[start:end]
    return value.lstrip(b" \t").rstrip(b" \t\r")


def _threads(rootfd: int, pid: int, stat_text, status):
    """``(count or -errno, [(tid, processor, allowed)])``; the leader's values come from the process's own
    ``stat``/``status`` texts when those were read (as native/pn_procs.c does)."""
    try:
        fd = _open(rootfd, f"proc/{pid}/task", os.O_RDONLY | os.O_DIRECTORY)
        try:
            names = os.listdir(fd)
        finally:
            os.close(fd)
    except OSError as err:
        return -(err.errno or errno.EIO), []
    tids = sorted(t for t in (_digits(n.encode("utf-8", "surrogateescape"), 0x7FFFFFFF) for n in names) if t > 0)
    tids = tids[:_THREADS_MAX]
    out = []
    for tid in tids:
        leader = tid == pid
        task_stat = stat_text if leader and isinstance(stat_text, bytes) else \
            _read_text(rootfd, f"proc/{pid}/task/{tid}/stat")
        task_status = status if leader and isinstance(status, bytes) else \
            _read_text(rootfd, f"proc/{pid}/task/{tid}/status")
        processor = _processor(task_stat) if isinstance(task_stat, bytes) else -1
        allowed = _allowed(task_status) if isinstance(task_status, bytes) else task_status
        out.append((tid, processor, _text(allowed)))
    return len(tids), out


def read_processes(rootfd: int, pids, flags: int) -> list:
    """See :func:`pynuma._native_procs.read_processes`."""
    result = []
    nodata = -errno.ENODATA
    for pid in pids:
        pid = int(pid)
        if pid <= 0:
            result.append(-errno.ESRCH)
            continue
        try:
            os.close(_open(rootfd, f"proc/{pid}", os.O_RDONLY | os.O_DIRECTORY))
        except OSError as err:
            result.append(-(err.errno or errno.EIO))
            continue
        stat_text = _read_text(rootfd, f"proc/{pid}/stat") if flags & STAT else nodata
        status = _read_text(rootfd, f"proc/{pid}/status") if flags & STATUS else nodata
        maps = _read_maps(rootfd, f"proc/{pid}/numa_maps") if flags & MAPS else (nodata, 0, 0, [], [])
        threads = _threads(rootfd, pid, stat_text, status) if flags & THREADS else (nodata, [])
        result.append((_text(stat_text), _text(status)) + maps + threads)
    return result
