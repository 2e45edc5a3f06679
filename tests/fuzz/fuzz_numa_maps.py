"""Fuzz target: a process's ``numa_maps`` (and, from the same bytes, its ``status``) read by the process reader, native against pure."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, tree, twins  # noqa: E402

NAME = "numa_maps"

_FILES = (("proc/1/stat", "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1000 1\n"),
          ("proc/1/status", "Name:\tinit\nPid:\t1\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t0\n"),
          ("proc/1/numa_maps", ""), ("proc/1/cmdline", "init\0"))


def _proc_tree(root: str) -> None:
    import os

    os.makedirs(os.path.join(root, "proc/1/task/1"))
    for rel, body in _FILES:
        with open(os.path.join(root, rel), "w") as f:
            f.write(body)


def check(data: bytes) -> None:
    from pynuma.fsroot import FsRoot

    t = tree("proc", _proc_tree)
    t.put("proc/1/numa_maps", data)
    t.put("proc/1/status", b"Name:\tinit\n" + data[:200])
    flags = 0xFF  # every part the reader knows
    with FsRoot(t.dir) as fs:
        twins("procs", "read_processes", fs.root_fd, [1], flags)


if __name__ == "__main__":
    fuzz_main(check, NAME)
