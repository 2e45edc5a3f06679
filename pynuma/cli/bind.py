"""``pynuma bind PID``: re-pin a running process and/or migrate its pages (like ``taskset -p`` + ``migratepages``).

    pynuma bind 1234 --cpus 0-3                # the main thread only
    pynuma bind 1234 --all-threads --cpunodebind 1
    pynuma bind 1234 --migrate 0 1             # move its pages from node 0 to node 1
    pynuma bind 1234 --cpus 4-7 --dry-run --json
    pynuma bind --name '^postgres' --user postgres --all-threads --cpunodebind 0 --migrate 1 0

``--name`` acts on every user process whose command name matches (a
regular expression, as ``pgrep``; ``pynuma procs --name`` lists the same
ones); a process that exits meanwhile is skipped.  With ``--name`` the
JSON is a list with one object per process.
"""
from __future__ import annotations

from . import _common
from ._streams import stderr


def build_parser():
    p = _common.parser("bind", "Change the CPU affinity of a running process and migrate its pages.")
    p.add_argument("pid", type=int, nargs="?", help="process id (or --name)")
    p.add_argument("--name", metavar="PATTERN",
                   help="every process whose command name matches this regular expression (as pgrep)")
    p.add_argument("--user", metavar="U", help="with --name: only processes of this user (name or uid)")
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


def _targets(args, p, fs):
    """``[(pid, name or None)]`` to act on: the pid given, or the processes ``--name``/``--user`` find."""
    if args.user is not None and args.name is None:
        p.error("--user selects among --name's matches: give --name too")
    if (args.pid is None) == (args.name is None):
        p.error("give either a PID or --name PATTERN")
    if args.pid is not None:
        if args.pid <= 0:
            p.error(f"argument pid: {args.pid} is not a process id")
        from ..limits import PID_MAX_LIMIT

        if args.pid > PID_MAX_LIMIT:  # no process can have it (and a syscall could not take it)
            from ..errors import NoSuchProcess

            raise NoSuchProcess(f"pid {str(args.pid)[:40]}: no such process (pids end at {PID_MAX_LIMIT})")
        return [(args.pid, None)]
    from ..errors import NoSuchProcess
    from ..procs import find_processes

    _common.check_user(p, args.user, args.root)
    found = find_processes(args.name, args.user, root=fs)
    if not found:
        who = f" of user {args.user}" if args.user is not None else ""
        raise NoSuchProcess(f"no process{who} has a name matching --name {args.name!r}")
    return [(ident.pid, ident.name) for ident in found]


def _apply(pid, fs, args, cpus, migrate):
    """What was (or would be) done to ``pid``, JSON-ready."""
    from .. import bind

    threads = bind.thread_ids(pid, fs)  # NoSuchProcess, on a dry run too, for a process that is not there
    if not args.all_threads:
        threads = [pid]
    result = {"pid": pid, "threads": sorted(threads), "cpus": None if cpus is None else str(cpus),
              "migrate": None if migrate is None else {"from": str(migrate[0]), "to": str(migrate[1])},
              "dry_run": args.dry_run}
    if not args.dry_run:
        if cpus is not None:
            result["threads"] = sorted(bind.set_affinity(cpus, pid, all_threads=args.all_threads, fs=fs))
        if migrate is not None:
            result["migrate"]["pages_not_moved"] = bind.migrate_pages(pid, migrate[0], migrate[1], fs=fs)
    return result


def _say(result, cpus, migrate, dry_run, name=None) -> None:
    who = f"pid {result['pid']}" + (f" ({name})" if name else "")
    verb = "would set" if dry_run else "set"
    if cpus is not None:
        print(f"{who}: {verb} CPUs {cpus} on {len(result['threads'])} thread(s)")
    if migrate is not None:
        left = result["migrate"].get("pages_not_moved")
        tail = "" if left is None else f" ({left} page(s) could not be moved)"
        print(f"{who}: {'would migrate' if dry_run else 'migrated'} pages from nodes "
              f"{migrate[0]} to {migrate[1]}{tail}")


def main(argv) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.cpus is None and args.cpunodebind is None and args.migrate is None:
        p.error("nothing to do: give --cpus, --cpunodebind and/or --migrate")
    from .. import bind
    from ..errors import InputError, NoSuchProcess
    from ..fsroot import FsRoot
    from ..parse import shown

    fs = FsRoot(args.root)
    targets = _targets(args, p, fs)
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
        if not old or not new:
            raise InputError(f"--migrate {shown(args.migrate[0])} {shown(args.migrate[1])}: "
                             "both node lists must name a node")
        bind.check_nodes(old, fs, need_memory=False)
        bind.check_nodes(new, fs, need_memory=True)
        migrate = (old, new)
    if args.name is None:
        result = _apply(targets[0][0], fs, args, cpus, migrate)
        if args.json:
            _common.print_json(result)
        else:
            _say(result, cpus, migrate, args.dry_run)
        return 0
    results, vanished = [], 0
    for pid, name in targets:
        try:
            result = _apply(pid, fs, args, cpus, migrate)
        except NoSuchProcess:
            vanished += 1  # exited since it was found
            continue
        result["name"] = name
        results.append(result)
        if not args.json:
            _say(result, cpus, migrate, args.dry_run, name)
    if args.json:
        _common.print_json(results)
    if vanished:
        print(f"pynuma bind: {vanished} matching process(es) exited before they could be changed", file=stderr())
    return 0
