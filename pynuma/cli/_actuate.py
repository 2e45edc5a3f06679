"""Options shared by the commands that write cgroups (``apply``, ``evict``)."""
from __future__ import annotations

import argparse


def add_target(p: argparse.ArgumentParser) -> None:
    """``--root``/``--target-root``, ``--cgroup-root``, ``--cgroup-driver``."""
    from ._common import add_root

    add_root(p)
    p.add_argument("--target-root", action="store_true",
                   help="write under --root DIR (a fake root): without it, only the live host is written")
    p.add_argument("--cgroup-root", default="/", metavar="PATH",
                   help="the kubelet's --cgroup-root: the cgroup that holds kubepods (default /)")
    p.add_argument("--cgroup-driver", choices=("cgroupfs", "systemd"),
                   help="cgroup names to use; default: the driver of the existing kubepods cgroup")


def open_target(fs, args, dry_run: bool):
    """The cgroup tree the arguments name; a dry run may look at a fake root without ``--target-root``."""
    from ..apply.tree import open_tree

    return open_tree(fs, args.cgroup_root, args.cgroup_driver, allow_fake_root=args.target_root or dry_run)


def print_plan(plan, dry_run: bool) -> None:
    """The plan's lines; a real run lists what it changed."""
    if dry_run:
        text = plan.describe()
        print(text if text else "nothing to do")
        return
    for step in plan.changes:
        print(step.describe("" if plan.root == "/" else plan.root.rstrip("/")))
    for note in plan.notes:
        print(f"note: {note}")
    if not plan.changes:
        print("nothing to change: the cgroups already match")
