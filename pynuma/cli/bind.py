"""``pynuma bind PID``: re-pin a running process and/or migrate its pages (like ``taskset -p`` + ``migratepages``).

    pynuma bind 1234 --cpus 0-3                # the main thread only
    pynuma bind 1234 --all-threads --cpunodebind 1
    pynuma bind 1234 --migrate 0 1             # move its pages from node 0 to node 1
    pynuma bind 1234 --cpus 4-7 --dry-run --json
"""
from __future__ import annotations

from . import _common


def build_parser():
    p = _common.parser("bind", "Change the CPU affinity of a running process and migrate its pages.")
    p.add_argument("pid", type=int, help="process id")
    p.add_argument("--all-threads", "-a", action="store_true", help="every thread, not just the main one")
    cpu = p.add_mutually_exclusive_group()
    cpu.add_argument("--cpus", "-c", metavar="LIST", help="CPUs to run on (cpulist or 'all')")
    cpu.add_argument("--cpunodebind", "-N", metavar="NODES", help="run on the CPUs of NODES")
    p.add_argument("--migrate", nargs=2, metavar=("FROM", "TO"),
                   help="move the process's pages from nodes FROM to nodes TO (migrate_pages)")
    p.add_argument("--dry-run", action="store_true", help="check and print what would change, change nothing")
    _common.add_json(p)
    _common.add_root(p)
    return p


def main(argv) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.cpus is None and args.cpunodebind is None and args.migrate is None:
        p.error("nothing to do: give --cpus, --cpunodebind and/or --migrate")
    if args.pid <= 0:
        p.error(f"argument pid: {args.pid} is not a process id")
    from ..limits import PID_MAX_LIMIT

    if args.pid > PID_MAX_LIMIT:  # no process can have it (and a syscall could not take it)
        from ..errors import NoSuchProcess

        raise NoSuchProcess(f"pid {str(args.pid)[:40]}: no such process (pids end at {PID_MAX_LIMIT})")
    from .. import bind
    from ..errors import InputError
    from ..fsroot import FsRoot

    fs = FsRoot(args.root)
    if not args.dry_run:
        fs.require_host("pynuma bind")
    cpus = None
    if args.cpus is not None:
        cpus = bind.online_cpus(fs) if args.cpus == "all" else bind.ids(args.cpus, "--cpus")
        bind.check_cpus(cpus, fs)
    elif args.cpunodebind is not None:
        cpus = bind.node_cpus(bind.ids(args.cpunodebind, "--cpunodebind"), fs)
        if not cpus:
            raise InputError(f"--cpunodebind {args.cpunodebind}: those nodes have no CPUs")
    migrate = None
    if args.migrate is not None:
        old, new = (bind.ids(v, "--migrate node list") for v in args.migrate)
        bind.check_nodes(old, fs, need_memory=False)
        bind.check_nodes(new, fs, need_memory=True)
        migrate = (old, new)
    threads = bind.thread_ids(args.pid, fs) if args.all_threads else [args.pid]
    result = {"pid": args.pid, "threads": sorted(threads), "cpus": None if cpus is None else str(cpus),
              "migrate": None if migrate is None else {"from": str(migrate[0]), "to": str(migrate[1])},
              "dry_run": args.dry_run}
    if not args.dry_run:
        if cpus is not None:
            result["threads"] = sorted(bind.set_affinity(cpus, args.pid, all_threads=args.all_threads, fs=fs))
        if migrate is not None:
            result["migrate"]["pages_not_moved"] = bind.migrate_pages(args.pid, migrate[0], migrate[1], fs=fs)
    if args.json:
        _common.print_json(result)
        return 0
    verb = "would set" if args.dry_run else "set"
    if cpus is not None:
        print(f"pid {args.pid}: {verb} CPUs {cpus} on {len(result['threads'])} thread(s)")
    if migrate is not None:
        left = result["migrate"].get("pages_not_moved")
        tail = "" if left is None else f" ({left} page(s) could not be moved)"
        print(f"pid {args.pid}: {'would migrate' if args.dry_run else 'migrated'} pages from nodes "
              f"{migrate[0]} to {migrate[1]}{tail}")
    return 0
