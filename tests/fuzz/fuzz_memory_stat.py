"""Fuzz target: a cgroup's ``memory.stat`` and ``memory.current`` read by the cgroup walk, native against pure."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, tree, twins  # noqa: E402

NAME = "memory_stat"

def _cgroup_tree(root: str) -> None:
    from pynuma.cgroups.detect import SYSTEMD, V2
    from pynuma.cgroups.synthetic import build_tree, make_pods

    build_tree(root, mode=V2, driver=SYSTEMD, pods=make_pods(1, containers_per_pod=1))


def check(data: bytes) -> None:
    import os

    from pynuma.cgroups import v2
    from pynuma.fsroot import FsRoot

    t = tree("cgroup", _cgroup_tree)
    pods = os.path.join(t.dir, "sys/fs/cgroup/kubepods.slice")
    pod = next(p for p in sorted(os.listdir(pods)) if "pod" in p)
    t.put(f"sys/fs/cgroup/kubepods.slice/{pod}/memory.stat", data)
    t.put(f"sys/fs/cgroup/kubepods.slice/{pod}/memory.current", data[:24])
    specs = [tuple(s) for s in v2.file_specs(["2MB"])]
    with FsRoot(t.dir) as fs:
        twins("cgwalk", "walk", fs.root_fd, ["sys/fs/cgroup/kubepods.slice"], True, specs, True)


if __name__ == "__main__":
    fuzz_main(check, NAME)
