"""``pynuma procs``: which processes run on one node and use memory on another.

    pynuma procs --all --sort remote           # the most misplaced first
    pynuma procs 1234 5678 --json
    pynuma procs --name '^postgres' --user postgres
    pynuma procs --all --root /tmp/dump        # a saved /proc + /sys (users are uids there)

Per process: allowed CPUs and the nodes they span, the nodes its threads
last ran on, resident memory per node (``numa_maps``: pages times each
mapping's page size), its memory policy and its remote share (the part of
its memory on nodes where none of its threads may run).  Processes that
exit or deny access meanwhile are skipped and counted on stderr.  Exit 1
when a requested pid could not be shown.
"""
from __future__ import annotations


from . import _common
from ._streams import stderr, stdout


def build_parser():
    p = _common.parser("procs", "NUMA placement of processes: CPUs, nodes, memory per node, remote share.")
    p.add_argument("pids", nargs="*", type=int, metavar="PID", help="process ids")
    p.add_argument("--name", metavar="PATTERN", help="command names matching this regular expression (as pgrep)")
    p.add_argument("--user", metavar="U", help="processes of this user (name or uid)")
    p.add_argument("--all", "-a", action="store_true", help="every process")
    p.add_argument("--kernel-threads", action="store_true", help="list kernel threads too (they have no user memory)")
    from ..procs import SORTS

    p.add_argument("--sort", choices=sorted(SORTS), default="pid",
                   help="order: pid, or largest first remote share / memory / CPU time")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per process, instead of a table")
    _common.add_root(p)
    return p


def _size(n: int) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n}{unit}" if unit == "" else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)  # not reached


def _table(rows) -> None:
    head = ("PID", "USER", "NAME", "CPUS", "CPU-NODES", "RAN-ON", "MEMORY-BY-NODE", "REMOTE", "POLICY")
    lines = [head]
    for p in rows:
        memory = " ".join(f"{n}:{_size(b)}" for n, b in sorted(p.memory_by_node.items())) or "-"
        lines.append((str(p.pid), p.user or "?", p.name, str(p.cpus_allowed) or "-", str(p.cpu_nodes) or "-",
                      str(p.running_nodes) or "-", memory, f"{p.remote_share:.0%}",
                      "?" if p.policy is None else str(p.policy)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    for line in lines:
        stdout().write("  ".join(v.ljust(w) for v, w in zip(line, widths)) + "  " + line[-1] + "\n")


def main(argv) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if not (args.pids or args.name or args.user or args.all):
        p.error("nothing selected: give PIDs, --name, --user or --all")
    bad = [pid for pid in args.pids if pid <= 0]
    if bad:
        p.error(f"argument PID: {bad[0]} is not a process id")
    _common.check_user(p, args.user, args.root)
    from ..procs import processes

    found = processes(args.pids or None, name=args.name, user=args.user, root=args.root,
                      kernel_threads=args.kernel_threads, sort=args.sort)
    if args.json:
        _common.print_json([q.to_dict() for q in found])
    else:
        _table(found)
    for text in found.warnings:
        print(f"pynuma procs: warning: {text}", file=stderr())
    denied = found.denied - len(found.refused)  # requested ones get their own line below
    skipped = [f"{n} {what}" for n, what in ((found.vanished, "vanished"), (denied, "denied access")) if n]
    if skipped:
        print(f"pynuma procs: skipped {', '.join(skipped)}", file=stderr())
    for pid in found.missing:
        print(f"pynuma procs: error: pid {pid}: no such process", file=stderr())
    for pid in found.refused:
        print(f"pynuma procs: error: pid {pid}: access to its memory map denied", file=stderr())
    return 1 if found.missing or found.refused else 0
