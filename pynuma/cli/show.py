"""``pynuma show [PID]``: CPUs, memory nodes and memory policy of a process (like ``numactl --show``).

Without PID it shows pynuma's own placement, which it inherited: so
``pynuma run --membind 0 -- pynuma show`` prints ``policy: bind``.  For
this process the policy comes from ``get_mempolicy(2)``; for another
process from ``/proc/PID/numa_maps`` (the policy most mappings follow: the
kernel offers no syscall to read another task's policy).
"""
from __future__ import annotations

import os

from . import _common


def build_parser():
    p = _common.parser("show", "Show the CPUs, memory nodes and memory policy of a process.")
    p.add_argument("pid", nargs="?", type=int, help="process id (default: this process)")
    p.add_argument("--threads", action="store_true", help="also list each thread's CPU affinity")
    _common.add_json(p)
    _common.add_root(p)
    return p


def _status(fs, pid: int) -> dict:
    text = fs.read_optional(f"/proc/{pid}/status")
    if text is None:
        from ..errors import NoSuchProcess

        raise NoSuchProcess(f"{fs.host_path(f'/proc/{pid}/status')}: no such process")
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = value.strip()
    return out


def _cpuset(text, what, fs):
    from ..cpuset import CPUSet
    from ..errors import ParseError

    try:
        return CPUSet.parse(text or "")
    except ValueError as err:
        raise ParseError(what, str(err)) from None


def gather(pid, fs, threads: bool = False) -> dict:
    """The placement of ``pid`` (None: this process) as a JSON-ready dict."""
    from .. import bind
    from ..cpuset import CPUSet

    own = pid is None or pid == os.getpid()
    if pid is None:
        fs.require_host("showing this process's placement")
        pid = os.getpid()
    status = _status(fs, pid)
    where = fs.host_path(f"/proc/{pid}/status")
    cpus = bind.get_affinity(pid, fs) if fs.is_host else _cpuset(status.get("Cpus_allowed_list"), where, fs)
    mems = _cpuset(status.get("Mems_allowed_list"), where, fs)
    if own and bind.mempolicy_supported():
        policy, source = bind.get_mempolicy(fs), "get_mempolicy"
    else:
        policy, source = bind.process_policy(pid, fs), "numa_maps"
    nodes = bind.numa_nodes(fs)
    cpu_nodes = CPUSet(n for n in nodes if bind.node_cpus([n], fs) & cpus)
    result = {
        "pid": pid, "name": status.get("Name"),
        "cpus_allowed": str(cpus), "cpu_nodes": str(cpu_nodes), "mems_allowed": str(mems),
        "policy": None if policy is None else policy.mode,
        "policy_nodes": None if policy is None else str(policy.nodes),
        "policy_flags": [] if policy is None else list(policy.flags),
        "policy_source": source if policy is not None else None,
    }
    if threads and fs.is_host:
        result["threads"] = {str(t): str(c) for t, c in bind.thread_affinities(pid, fs).items()}
    elif threads:  # a dump: what its /proc recorded
        result["threads"] = {str(t): str(_cpuset(_status(fs, f"{pid}/task/{t}").get("Cpus_allowed_list"), where, fs))
                             for t in sorted(bind.thread_ids(pid, fs))}
    return result


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    from ..fsroot import FsRoot

    fs = FsRoot(args.root)
    if args.pid is not None and args.pid <= 0:
        from ..errors import InputError

        raise InputError(f"pid {args.pid}: process ids are positive integers")
    info = gather(args.pid, fs, args.threads)
    if args.json:
        _common.print_json(info)
        return 0
    policy = info["policy"] or "unknown (numa_maps unreadable)"
    if info["policy_flags"]:
        policy += f" ({', '.join(info['policy_flags'])} nodes)"
    print(f"pid: {info['pid']} ({info['name']})")
    print(f"policy: {policy}")
    print(f"policy nodes: {info['policy_nodes'] or '-'}")
    print(f"cpus allowed: {info['cpus_allowed']}")
    print(f"cpu nodes: {info['cpu_nodes']}")
    print(f"memory nodes allowed: {info['mems_allowed']}")
    for tid, cpus in info.get("threads", {}).items():
        print(f"  thread {tid}: cpus {cpus}")
    return 0
