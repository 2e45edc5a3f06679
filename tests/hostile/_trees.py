"""Hostile fake roots: a small machine with one kind of damage each (shared by the tests and .ci/valgrind).

Symlinks that try to leave the root (absolute and ``..``), symlink loops,
FIFOs, sockets and a character device where small files are expected,
sparse 64 GiB files, odd directory names, huge and negative ids.
"""
from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import Dict

from tests.fixtures.sysfs_builder import Machine, put

CGROUP = "sys/fs/cgroup"
POD = f"{CGROUP}/kubepods.slice/kubepods-pod1234.slice"


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




def sentinel(outside: Path) -> Path:
    """A file beside the roots that no read may reach."""
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret"
    secret.write_text("0\n")
    return secret


def build_trees(base: Path) -> "tuple[Path, Dict[str, Path]]":
    """Every tree of :data:`TREES` under ``base``, and the sentinel beside them."""
    secret = sentinel(base / "outside")
    made = {}
    for name in TREES:
        root = base / name
        Machine(packages=2, cores_per_node=2).write(root)
        _cgroup_v2(root)
        _damage(name, root, secret)
        made[name] = root
    return secret, made
