"""``pynuma run``: exec a command with a CPU and memory placement (like ``numactl``/``taskset``).

    pynuma run --cpus 0-3 --membind 0 -- ./server --port 8080
    pynuma run --cpunodebind 1 --interleave all -- stress-ng ...
    pynuma run --preferred 1 --dry-run --json -- true

The memory policy is set on this process (it survives ``exec``), then the
CPU affinity, then the command replaces pynuma.  Called through
:func:`pynuma.cli.main` inside another program, which pynuma must not
replace, the command runs as a child instead: the placement is set on a
short-lived thread of pynuma's own (both settings belong to a thread and
pass to the processes it starts), so the caller's threads keep theirs.
Exit status: the command's own (128 + N when signal N ended the child);
2 for bad options or ids (named); 1 when the kernel refuses; 127/126 when
the command is not found / not executable (as ``env`` and ``timeout`` do).
"""
from __future__ import annotations

import os

from . import _common
from ._streams import stderr, stdout

POLICY_OPTIONS = (
    ("membind", "bind", "allocate only on NODES"),
    ("interleave", "interleave", "interleave allocations over NODES"),
    ("preferred", "preferred", "prefer NODE, fall back to others"),
    ("preferred_many", "preferred-many", "prefer NODES, fall back to others (Linux 5.15+)"),
    ("weighted_interleave", "weighted-interleave", "interleave by the kernel's node weights (Linux 6.9+)"),
)


def build_parser():
    p = _common.parser("run", "Run a command with a CPU and memory placement.")
    cpu = p.add_mutually_exclusive_group()
    cpu.add_argument("--cpus", "--physcpubind", "-C", metavar="LIST", help="CPUs to run on (cpulist or 'all')")
    cpu.add_argument("--cpunodebind", "-N", metavar="NODES", help="run on the CPUs of NODES")
    mem = p.add_mutually_exclusive_group()
    for dest, _, text in POLICY_OPTIONS:
        flag = "--" + dest.replace("_", "-")
        mem.add_argument(flag, dest=dest, metavar="NODE" if dest == "preferred" else "NODES", help=text)
    mem.add_argument("--localalloc", "-l", action="store_true", help="allocate on the node of the running CPU")
    flags = p.add_mutually_exclusive_group()
    flags.add_argument("--static", action="store_true", help="node ids are absolute, never remapped (MPOL_F_STATIC_NODES)")
    flags.add_argument("--relative", action="store_true", help="node ids are relative to the cpuset's nodes (MPOL_F_RELATIVE_NODES)")
    p.add_argument("--dry-run", action="store_true", help="check and print the placement, run nothing")
    _common.add_json(p)
    _common.add_root(p)
    p.add_argument("command", nargs=_common.REMAINDER, metavar="-- CMD ARGS", help="the command to run")
    return p


def _command(words):
    """The command argparse left over, without the ``--`` that may introduce it."""
    words = list(words)
    return words[1:] if words[:1] == ["--"] else words


def placement(args, fs):
    """``(cpus or None, (mode, nodes) or None)`` checked against the root; ``InputError`` naming bad ids."""
    from .. import bind

    cpus = None
    if args.cpus is not None:
        cpus = bind.online_cpus(fs) if args.cpus == "all" else bind.ids(args.cpus, "--cpus")
        bind.check_cpus(cpus, fs)
    elif args.cpunodebind is not None:
        nodes = bind.numa_nodes(fs) if args.cpunodebind == "all" else bind.ids(args.cpunodebind, "--cpunodebind")
        cpus = bind.node_cpus(nodes, fs)
        if not cpus:
            from ..errors import InputError

            raise InputError(f"--cpunodebind {args.cpunodebind}: those nodes have no CPUs")
    policy = None
    if args.localalloc:
        policy = ("local", bind.ids(None))
    for dest, mode, _ in POLICY_OPTIONS:
        value = getattr(args, dest)
        if value is not None:
            nodes = bind.numa_nodes(fs) if value == "all" else bind.ids(value, "--" + dest.replace("_", "-"))
            policy = (mode, nodes)
    if policy is not None:
        bind.check_policy(policy[0], policy[1], args.static, args.relative, fs)
    elif args.static or args.relative:
        from ..errors import InputError

        raise InputError("--static/--relative need a memory policy option")
    return cpus, policy


def main(argv) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    command = _command(args.command)
    if not command and not args.dry_run:
        p.error("no command given (pynuma run [OPTIONS] -- CMD ARGS...)")
    if command and not command[0]:
        p.error("the command is an empty string (pynuma run [OPTIONS] -- CMD ARGS...)")
    from .. import bind
    from ..fsroot import FsRoot

    fs = FsRoot(args.root)
    cpus, policy = placement(args, fs)
    if args.dry_run:
        plan = {"command": command, "cpus": None if cpus is None else str(cpus),
                "memory_policy": None if policy is None else policy[0],
                "nodes": None if policy is None else str(policy[1]),
                "flags": [f for f in ("static", "relative") if getattr(args, f)]}
        if args.json:
            _common.print_json(plan)
        else:
            print(f"would run {' '.join(command) or '(nothing)'} on CPUs {plan['cpus'] or 'unchanged'}, "
                  f"memory policy {plan['memory_policy'] or 'unchanged'}"
                  + (f" on nodes {plan['nodes']}" if plan["nodes"] else ""))
        return 0
    fs.require_host("pynuma run")

    def place() -> None:
        """The placement, on the calling thread (inherited by what it starts, kept across ``exec``)."""
        if policy is not None:
            bind.set_mempolicy(policy[0], policy[1], static=args.static, relative=args.relative, fs=fs)
        if cpus is not None:
            bind.set_affinity(cpus, 0, fs=fs)

    stdout().flush()
    from . import owns_process

    if not owns_process():
        return _run_child(command, place)
    place()
    try:
        os.execvp(command[0], command)
    except OSError as err:
        return _cannot_start(command, err)
    return 1  # not reached


def _run_child(command, place) -> int:
    """Run ``command`` as a child started by a thread that took the placement, and wait for it."""
    import subprocess
    import threading

    outcome: dict = {}

    def start() -> None:
        try:
            place()
        except BaseException as err:  # noqa: B902 - handed to the caller's thread below
            outcome["error"] = err
            return
        try:
            outcome["child"] = subprocess.Popen(command)
        except OSError as err:
            outcome["spawn_error"] = err

    starter = threading.Thread(target=start, name="pynuma-run-placement")
    starter.start()
    starter.join()
    if "error" in outcome:
        raise outcome["error"]
    if "spawn_error" in outcome:
        return _cannot_start(command, outcome["spawn_error"])
    with outcome["child"] as child:
        code = child.wait()
    return 128 - code if code < 0 else code


def _cannot_start(command, err: OSError) -> int:
    """The exit status (and line) for a command that could not be started, as ``env`` gives them."""
    if isinstance(err, FileNotFoundError):
        print(f"pynuma run: error: command not found: {command[0]}", file=stderr())
        return 127
    if isinstance(err, PermissionError):
        print(f"pynuma run: error: command not executable: {command[0]}", file=stderr())
        return 126
    from ..errors import InputError

    raise InputError(f"cannot run {command[0]}: {err.strerror}") from err
