"""``pynuma cgroups``: cgroup mode and driver, and the usage of every kubelet pod and container cgroup."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List, Optional


def _mib(v: Optional[int]) -> str:
    from ..cgroups import UNLIMITED
    from ._units import human_bytes

    if v is not None and (v >= UNLIMITED or v > (1 << 62)):
        return "max"
    return human_bytes(v)


def _num(v: Optional[int]) -> str:
    from ..cgroups import UNLIMITED

    return "-" if v is None else ("max" if v >= UNLIMITED else str(v))


def main(argv: List[str]) -> int:
    from ._common import add_json, add_root, parser, print_json, printable

    def say(line: str) -> None:
        print(printable(line))  # names come from directory names: escape what would drive the terminal

    p = parser("cgroups", "Cgroup mode, kubelet driver, and usage of every pod and container cgroup.")
    add_root(p)
    p.add_argument("--cgroup-root", default="/", metavar="PATH", help="the kubelet's --cgroup-root (default /)")
    p.add_argument("--explain", action="store_true", help="show how the mode and driver were detected")
    add_json(p)
    args = p.parse_args(argv)

    from ..cgroups import detect, kubepods_stats, node_root_stats, walk_pods
    from ..errors import PynumaError
    from ..fsroot import FsRoot

    with FsRoot(args.root) as fs:
        layout = detect(fs, args.cgroup_root)
        try:
            root = node_root_stats(fs, layout)
        except PynumaError:
            root = None
        kp = kubepods_stats(fs, layout) if layout.kubepods else None
        pods = walk_pods(fs, layout)
    if args.json:
        print_json({
            "mode": layout.mode, "driver": layout.driver, "kubepods": layout.kubepods,
            "reasons": list(layout.reasons),
            "root": root.as_dict() if root else None, "kubepods_stats": kp.as_dict() if kp else None,
            "pods": [{"uid": pd.uid, "qos": pd.qos, **pd.stats.as_dict(),
                      "containers": [{"id": c.id, "runtime": c.runtime, **c.stats.as_dict()} for c in pd.containers]}
                     for pd in pods],
        })
        return 0
    say(f"mode: {layout.mode} (kubelet reads cgroup v{layout.version})   driver: {layout.driver or '-'}   "
        f"kubepods: {layout.kubepods or '-'}")
    if args.explain:
        for r in layout.reasons:
            say(f"  - {r}")
    if root is not None:
        print(f"node root: usage {_mib(root.memory_usage)}  working set {_mib(root.memory_working_set)}  "
              f"capacity {_mib(root.memory_limit)}")
    if kp is not None:
        print(f"kubepods:  usage {_mib(kp.memory_usage)}  working set {_mib(kp.memory_working_set)}  "
              f"limit {_mib(kp.memory_limit)}")
    if not pods:
        print("no pod cgroups")
        return 0
    # full container ids (the runtime's own, as crictl and the kubelet's logs show them): no truncation
    table = []
    for pd in pods:
        # names come from directory names: escaped before they reach the terminal (and the widths)
        table.append((printable(pd.uid), pd.qos, pd.stats))
        table += [(printable(f"  {c.runtime + ':' if c.runtime else ''}{c.id}"), "", c.stats) for c in pd.containers]
    width = max(len("POD/CONTAINER"), *(len(name) for name, _, _ in table))
    print(f"{'POD/CONTAINER':<{width}} {'QOS':<10} {'WORKSET':>10} {'USAGE':>10} {'LIMIT':>10} {'RSS':>10} "
          f"{'PIDS':>5} {'CPU-SECONDS':>11}")
    for name, qos, s in table:
        cpu = "-" if s.cpu_usage_ns is None else f"{s.cpu_usage_ns / 1e9:.1f}"
        print(f"{name:<{width}} {qos:<10} {_mib(s.memory_working_set):>10} {_mib(s.memory_usage):>10} "
              f"{_mib(s.memory_limit):>10} {_mib(s.memory_rss):>10} {_num(s.pids_current):>5} {cpu:>11}")
        for prob in s.problems:
            print(f"{'':<{width}} warning: {prob} unreadable or garbage, dropped")
    return 0
