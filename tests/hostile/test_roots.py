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
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pynuma import _impl
from tests.fixtures.sysfs_builder import Machine, put

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

CGROUP = "sys/fs/cgroup"
POD = f"{CGROUP}/kubepods.slice/kubepods-pod1234.slice"


def _sentinel(outside: Path) -> Path:
    """A file beside the root that no read may reach."""
    outside.mkdir(exist_ok=True)
    secret = outside / "secret"
    secret.write_text("0\n")
    return secret


def _cgroup_v2(root: Path) -> None:
    put(root, f"{CGROUP}/cgroup.controllers", "cpuset cpu io memory pids\n")
    put(root, f"{CGROUP}/memory.stat", "anon 1000\nfile 2000\ninactive_file 100\nactive_file 50\n")
    put(root, f"{POD}/memory.current", "4096\n")
    put(root, f"{POD}/memory.stat", "anon 4096\ninactive_file 0\nactive_file 0\n")
    put(root, f"{POD}/cpu.stat", "usage_usec 10\n")
    mounts = "sysfs /sys sysfs rw 0 0\nproc /proc proc rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"
    put(root, "proc/mounts", mounts)
    put(root, "proc/self/mounts", mounts)
    put(root, "proc/1/status", "Name:\tinit\nPid:\t1\n")
    put(root, "proc/1/numa_maps", "7f0000000000 default anon=1 N0=1 kernelpagesize_kB=4\n")
    put(root, "proc/1/cmdline", "init\0")
    put(root, "proc/1/stat", "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1000 1\n")


def _swap(root: Path, rel: str, make) -> None:
    path = root / rel
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)


def _symlink(target: str):
    return lambda path: os.symlink(target, path)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    import tempfile

    short = tempfile.mktemp(prefix="pn-sock-", dir="/tmp")  # AF_UNIX paths are at most 107 bytes
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(short)
    sock.close()  # the socket file stays; nobody listens
    os.rename(short, path)


def _device(path: Path) -> None:
    os.mknod(path, 0o600 | 0o020000, os.makedev(1, 5))  # a /dev/zero of the tree's own


def _sparse(path: Path) -> None:
    with open(path, "wb") as f:
        f.truncate(64 << 30)


def _depth_to_top(rel: str) -> str:
    return "/".join([".."] * (rel.count("/") + 4))


def _damage(name: str, root: Path, secret: Path) -> None:
    """Apply one kind of damage to a freshly written machine at ``root``."""
    online = "sys/devices/system/cpu/online"
    node0 = "sys/devices/system/node/node0"
    if name == "abs-symlinks":  # absolute: re-based on the root, never the host's files
        _swap(root, online, _symlink(str(secret)))
        _swap(root, "proc/meminfo", _symlink("/proc/meminfo"))
        _swap(root, f"{node0}/distance", _symlink("/sys/devices/system/node/node0/distance"))
        _swap(root, f"{CGROUP}/kubepods.slice", _symlink("/sys/fs/cgroup"))
    elif name == "dotdot-symlinks":  # relative, climbing past the root to the sentinel and the host
        _swap(root, online, _symlink(_depth_to_top(online) + str(secret)))
        _swap(root, "proc/meminfo", _symlink(_depth_to_top("proc/meminfo") + "/proc/meminfo"))
        _swap(root, "sys/devices/system/node", _symlink("../../../../../../../../sys/devices/system/node"))
        _swap(root, POD, _symlink("../../../../../../../../sys/fs/cgroup"))
    elif name == "loops":
        _swap(root, online, _symlink("online2"))
        _swap(root, "sys/devices/system/cpu/online2", _symlink("online"))
        os.symlink(".", root / node0 / "self")
        os.symlink("../..", root / POD / "up")
        _swap(root, "proc/meminfo", _symlink("meminfo"))
    elif name == "fifos":
        for rel in (online, "proc/meminfo", f"{node0}/distance", f"{node0}/meminfo", f"{POD}/memory.stat",
                    "proc/1/numa_maps", "proc/self/mounts"):
            _swap(root, rel, _fifo)
    elif name == "sockets":
        for rel in (online, "proc/meminfo", f"{node0}/cpulist", f"{POD}/memory.current"):
            _swap(root, rel, _socket)
    elif name == "devices":
        for rel in (online, "proc/meminfo", f"{node0}/distance", f"{POD}/memory.stat", "proc/1/numa_maps"):
            _swap(root, rel, _device)
        _swap(root, "proc/1/status", _symlink("/dev/zero"))  # re-based: missing inside the root
    elif name == "sparse":
        for rel in (online, "proc/meminfo", f"{node0}/meminfo", f"{POD}/memory.stat", "proc/1/numa_maps"):
            _swap(root, rel, _sparse)
    elif name == "odd-names":
        for odd in ("node0\n", "node\x1b[31m1", "cpu0 ", "kubepods-pod\x07.slice", "\x01"):
            where = f"{CGROUP}/kubepods.slice" if "pod" in odd or odd == "\x01" else "sys/devices/system/node"
            (root / where / odd).mkdir()
        os.mkdir(os.fsencode(root / "sys/devices/system/node") + b"/node\xff")
        os.mkdir(os.fsencode(root / CGROUP) + b"/kubepods.slice/kubepods-pod\xfe\xff.slice")
        (root / "proc" / "12\n").mkdir()
    elif name == "huge-ids":
        for rel in ("sys/devices/system/node/node2147483648", "sys/devices/system/node/node-1",
                    "sys/devices/system/node/node" + "9" * 240, "sys/devices/system/cpu/cpu1048575",
                    "sys/devices/system/cpu/cpu" + "9" * 240, "proc/" + "9" * 240,
                    "sys/kernel/mm/hugepages/hugepages-" + "9" * 200 + "kB"):
            (root / rel).mkdir(parents=True)
        put(root, online, "0-1048575\n")
        put(root, f"{node0}/cpulist", "0-262143:1/1\n")
        put(root, f"{node0}/distance", "10 " + "9" * 400 + "\n")
    else:  # pragma: no cover - a typo in TREES
        raise AssertionError(name)


TREES = ["abs-symlinks", "dotdot-symlinks", "loops", "fifos", "sockets", "devices", "sparse", "odd-names",
         "huge-ids"]


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile-roots")
    secret = _sentinel(base / "outside")
    made = {}
    for name in TREES:
        root = base / name
        Machine(packages=2, cores_per_node=2).write(root)
        _cgroup_v2(root)
        _damage(name, root, secret)
        made[name] = root
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
