"""Hostile fake roots, every read path, as processes: no read outside the root, no hang, bounded memory.

Each tree is a small machine (``sysfs_builder.Machine``) with one kind of
damage: symlinks that try to leave the root (absolute and ``..``), symlink
loops, FIFOs and sockets and a character device where small files are
expected, a sparse 64 GiB file, odd directory names, huge and negative ids.
Each read-only command runs on each tree through the three read paths
(openat2, the native component walk, pure) in a child with an address-space
cap and a deadline.  The case passes when the command gives a correct answer
or one clear line (exit 1 or 2), and -- where ``strace`` is installed -- no
file it opened resolves outside the root except the interpreter's own.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pynuma import _impl
from ._trees import TREES, build_trees

from ._limits import cap_address_space

MEMORY_CAP = 1 << 30
DEADLINE = 60
STRACE = shutil.which("strace")
PROJECT = Path(__file__).resolve().parents[2]

# the CLI, optionally forced onto the native component walk (a kernel without openat2)
DRIVER = ("import sys\n"
          "if sys.argv[1] == 'native-walk':\n"
          "    from pynuma import _impl\n"
          "    _impl.implementations('fsread')['native']._walk_only(True)\n"
          "sys.argv = ['pynuma', *sys.argv[2:]]\n"
          "from pynuma.__main__ import launch\n"
          "launch()\n")

COMMANDS = [
    ["topology", "--json"],
    ["topology", "--distances"],
    ["hugepages"],
    ["cgroups"],
    ["eviction"],
    ["procs", "--all"],
]


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile-roots")
    secret, made = build_trees(base)
    return base, secret, made


def _paths():
    native = "native" in _impl.implementations("fsread")
    if not native and os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1":
        pytest.fail("native fsread not built")
    return ["native", "native-walk", "pure"] if native else ["pure"]


READ_PATHS = ["native", "native-walk", "pure"]


def _limit() -> None:
    cap_address_space(MEMORY_CAP)


def _run(path_kind: str, argv, root: Path, trace: Path = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYNUMA_PURE="1" if path_kind == "pure" else "0", PYTHONPATH=str(PROJECT))
    cmd = [sys.executable, "-c", DRIVER, path_kind, *argv, "--root", str(root)]
    if trace is not None:
        cmd = [STRACE, "-f", "-qq", "-y", "-e", "trace=open,openat,openat2", "-e", "status=successful",
               "-o", str(trace), *cmd]
    return subprocess.run(cmd, capture_output=True, env=env, timeout=DEADLINE * (3 if trace else 1),
                          preexec_fn=_limit, cwd=str(root.parent))


_OPENED = re.compile(r"= \d+<(.*)>$")
# what the interpreter itself may open under the host's pseudo filesystems
_HOST_DEVICES = ("/dev/null", "/dev/urandom", "/dev/pts/", "/dev/tty")


def escapes(trace: Path, root: Path, secret: Path):
    """Files the traced process opened under the host's /sys, /proc and /dev, or beside the root.

    The interpreter's own reads (its libraries, locale, certificates, the
    working directory) are not the reader's and are not escapes; the host's
    pseudo filesystems and the sentinel tree beside the root are what a
    reader leaving its root would reach.
    """
    inside, beside = str(root), str(secret.parent.parent)
    out = []
    for line in trace.read_text(errors="replace").splitlines():
        m = _OPENED.search(line.rstrip())
        if not m:
            continue
        target = m.group(1)
        if target == inside or target.startswith(inside + "/") or target == beside:
            continue
        if target.startswith(beside + "/") or target.startswith(("/sys", "/proc")) \
                or target.startswith("/dev") and not target.startswith(_HOST_DEVICES):
            out.append(target)
    return out


def one_clear_line(res: subprocess.CompletedProcess) -> str:
    """Why the outcome is not a correct answer or one clear error line; '' when it is."""
    err = res.stderr.decode(errors="replace")
    if "Traceback" in err:
        return "traceback: " + err.strip().splitlines()[-1]
    if res.returncode < 0:
        return f"killed by signal {-res.returncode}"
    if res.returncode == 0:
        return "" if res.stdout.strip() else "no output"
    if res.returncode not in (1, 2):
        return f"exit {res.returncode}"
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("pynuma: warning")
             and "warning:" not in ln]
    if len(lines) != 1:
        return f"{len(lines)} error lines: {err[:300]!r}"
    if len(lines[0]) > 400:
        return "error line longer than 400 characters"
    return ""


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
@pytest.mark.parametrize("path_kind", READ_PATHS)
@pytest.mark.parametrize("tree", TREES)
def test_hostile_root(trees, tree, path_kind, argv, tmp_path):
    if path_kind not in _paths():
        pytest.skip("native fsread not built")
    _base, secret, made = trees
    root = made[tree]
    try:
        res = _run(path_kind, argv, root)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{tree}/{path_kind}: pynuma {' '.join(argv)} hung (> {DEADLINE} s)")
    why = one_clear_line(res)
    assert not why, f"{tree}/{path_kind}: pynuma {' '.join(argv)}: {why}"
    for stream in (res.stdout, res.stderr):  # names from the tree reach the terminal escaped
        text = stream.decode("utf-8")  # raises on a raw non-UTF-8 byte
        raw = sorted({c for c in text if c < " " and c not in "\n" or "\x7f" <= c < "\xa0"})
        assert not raw, f"{tree}/{path_kind}: pynuma {' '.join(argv)} wrote raw control characters {raw}"


# one traced run per tree and read path (the whole command set would triple the suite's time under strace)
TRACED = ["topology", "--json"], ["cgroups"], ["procs", "--all"]


@pytest.mark.skipif(STRACE is None, reason="strace not installed: the open-outside-the-root check needs it")
@pytest.mark.parametrize("path_kind", READ_PATHS)
@pytest.mark.parametrize("tree", TREES)
def test_no_open_outside_the_root(trees, tree, path_kind, tmp_path):
    if path_kind not in _paths():
        pytest.skip("native fsread not built")
    _base, secret, made = trees
    root = made[tree]
    for argv in TRACED:
        trace = tmp_path / "trace"
        res = _run(path_kind, argv, root, trace=trace)
        assert trace.exists() and trace.stat().st_size > 0, res.stderr[-500:]
        outside = escapes(trace, root, secret)
        assert not outside, f"{tree}/{path_kind}: pynuma {' '.join(argv)} opened {outside[:5]}"


def test_the_escape_check_sees_an_escape(trees, tmp_path):
    """The oracle itself: a program that does read the sentinel and /proc is caught."""
    if STRACE is None:
        pytest.skip("strace not installed")
    _base, secret, made = trees
    trace = tmp_path / "trace"
    subprocess.run([STRACE, "-f", "-qq", "-y", "-e", "trace=open,openat,openat2", "-e", "status=successful",
                    "-o", str(trace), sys.executable, "-c",
                    f"open({str(secret)!r}).read(); open('/proc/meminfo').read()"], check=True)
    found = escapes(trace, made["fifos"], secret)
    assert str(secret) in found and "/proc/meminfo" in found
