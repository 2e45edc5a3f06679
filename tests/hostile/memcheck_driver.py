"""The native readers over every hostile tree in one process: what ``.ci/valgrind`` runs under memcheck.

Builds the hostile roots (``_trees``) and cgroup trees of every layout,
including a v1 tree whose memory hierarchy is missing and one whose pod
directories vanish, then runs the read-only commands in-process on each,
through openat2 and through the component walk.  Prints the scenario
count; the commands' own output is discarded (their correctness is the
test suite's business, memory errors are memcheck's).

    python3 tests/hostile/memcheck_driver.py WORKDIR
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT))

COMMANDS = (["topology", "--json"], ["cgroups"], ["eviction"], ["hugepages"], ["procs", "--all"])


def roots(base: Path):
    """``(name, root)`` of every tree the driver reads."""
    from pynuma.cgroups.detect import CGROUPFS, HYBRID, SYSTEMD, V1, V2
    from pynuma.cgroups.synthetic import build_tree, make_pods
    from tests.hostile._trees import build_trees

    _secret, made = build_trees(base / "hostile")
    yield from made.items()
    for mode, driver in ((V1, CGROUPFS), (HYBRID, SYSTEMD), (V2, SYSTEMD)):
        root = base / f"cgroup-{mode}"
        build_tree(str(root), mode=mode, driver=driver, pods=make_pods(3))
        yield f"cgroup-{mode}", root
    root = base / "v1-no-memory"
    build_tree(str(root), mode=V1, driver=CGROUPFS, pods=make_pods(2))
    shutil.rmtree(root / "sys/fs/cgroup/memory")
    yield "v1-no-memory", root
    root = base / "v2-empty-pods"
    build_tree(str(root), mode=V2, driver=SYSTEMD, pods=make_pods(2))
    for pod in (root / "sys/fs/cgroup/kubepods.slice").glob("kubepods-*pod*"):
        for child in pod.iterdir():  # pods whose files went away mid-life
            if child.is_file():
                child.unlink()
    yield "v2-empty-pods", root


def main(work: str) -> int:
    from pynuma import _impl, cli

    native = _impl.implementations("fsread").get("native")
    if native is None or not _impl.native_in_use():
        print("memcheck driver: the native core is not in use", file=sys.stderr)
        return 1
    runs = 0
    with open(os.devnull, "w") as null:
        for name, root in roots(Path(work)):
            for walk_only in (False, True):
                native._walk_only(walk_only)
                for argv in COMMANDS:
                    with contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
                        cli.main([*argv, "--root", str(root)])
                    runs += 1
    native._walk_only(False)
    print(f"memcheck driver: {runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
