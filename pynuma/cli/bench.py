"""``pynuma bench memory``: NUMA latency and bandwidth matrices of this host.

    pynuma bench memory                      # defaults: 4 x LLC within 16-256 MiB, 0.5 s per measurement
    pynuma bench memory --size 256M --duration 1 --threads 4 --json

Rows are CPU nodes (the measuring thread runs there), columns memory nodes
(the buffer is bound there).  Progress goes to stderr, only on a terminal.
"""
from __future__ import annotations

import os
import sys

from . import _common
from ._streams import stderr


MAX_DURATION_S = 3600  # per measurement: an hour is already far beyond any useful figure


def build_parser():
    p = _common.parser("bench", "NUMA memory microbenchmarks.")
    sub = p.add_subparsers(dest="what", metavar="memory", required=True)
    m = sub.add_parser("memory", help="latency and bandwidth for every (CPU node, memory node) pair",
                       description="Pointer-chase latency and streaming read/copy bandwidth per node pair.")
    m.error = p.error  # one-line usage errors, exit 2
    m.add_argument("--size", metavar="BYTES", help="buffer per measurement, the most held at once "
                        "(K/M/G suffixes; default 4 x the largest cache, 16M-256M, at most 1/4 of MemAvailable)")
    m.add_argument("--duration", metavar="SEC", type=float, default=0.5, help="seconds per measurement (default 0.5)")
    m.add_argument("--threads", metavar="N", type=int, default=1, help="bandwidth threads per pair (default 1)")
    m.add_argument("--cpu-nodes", metavar="NODES", help="only these CPU nodes (rows)")
    m.add_argument("--mem-nodes", metavar="NODES", help="only these memory nodes (columns)")
    _common.add_json(m)
    _common.add_root(m)
    return p


def _progress(done: int, total: int, label: str) -> None:
    end = "\n" if done == total else ""
    stderr().write(f"\r\x1b[Kpynuma bench: [{done}/{total}] {label}{end}")
    stderr().flush()


def _table(title: str, result, matrix, fmt: str) -> list:
    lines = [title, "  cpu\\mem " + "".join(f"{n:>10}" for n in result.mem_nodes)]
    for i, row in enumerate(matrix):
        cells = "".join(f"{'-':>10}" if v is None else f"{v:>10{fmt}}" for v in row)
        lines.append(f"  {result.cpu_nodes[i]:>7} {cells}")
    return lines


def _beside(result) -> list:
    """Measured latency normalised to local = 10, next to the firmware's distances for the same pairs."""
    cols = "".join(f"{n:>6}" for n in result.mem_nodes)
    lines = ["latency normalised (local = 10)  |  firmware distances (SLIT / sysfs)",
             f"  cpu\\mem {cols}  | {cols}"]
    for i, row in enumerate(result.normalised):
        firmware = result.firmware[i] if result.firmware is not None else [None] * len(row)
        left = "".join(f"{'-' if v is None else v:>6}" for v in row)
        right = "".join(f"{'?' if v is None else v:>6}" for v in firmware)
        lines.append(f"  {result.cpu_nodes[i]:>7} {left}  | {right}")
    if result.firmware is None:
        lines.append("  (the firmware reports no distances for these nodes)")
    return lines


def main(argv) -> int:
    args = build_parser().parse_args(argv)
    from .. import bind, membench
    from ..errors import InputError
    from ..fsroot import FsRoot

    fs = FsRoot(args.root)
    fs.require_host("pynuma bench")  # it measures this machine, whatever the dump says
    size = None if args.size is None else membench.parse_size(args.size)
    if not 0 < args.duration <= MAX_DURATION_S:  # nan and inf (or a year) would measure forever
        raise InputError(f"--duration {args.duration:g}: must be > 0 and at most {MAX_DURATION_S} s")
    if args.threads < 1:
        raise InputError(f"--threads {args.threads}: must be >= 1")
    from ..discover import discover

    topo = discover()
    if args.threads > len(topo.online_cpus):  # more would only queue on the same CPUs (and cost a stack each)
        raise InputError(f"--threads {args.threads}: at most the {len(topo.online_cpus)} online CPUs")
    known = set(topo.node_ids)
    picks = {}
    for opt in ("cpu_nodes", "mem_nodes"):
        text = getattr(args, opt)
        if text is not None:
            nodes = bind.ids(text, f"--{opt.replace('_', '-')}")
            bad = [n for n in nodes if n not in known]
            if bad:
                raise InputError(f"--{opt.replace('_', '-')}: NUMA node {bad[0]} does not exist (nodes: "
                                 f"{','.join(map(str, sorted(known)))})")
            picks[opt] = list(nodes)
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if size is not None and size > memory:
        raise InputError(f"--size {args.size}: more than this machine's {memory} bytes of memory")
    progress = _progress if sys.stderr is not None and sys.stderr.isatty() and not args.json else None
    try:
        result = membench.run(topo, size=size, duration=args.duration, threads=args.threads,
                              progress=progress, **picks)
    except MemoryError:
        from ..errors import PynumaError

        raise PynumaError(f"--size {args.size}: the buffers could not be allocated (not enough free memory)") from None
    if args.json:
        _common.print_json(result.to_dict())
        return 0
    mib = result.size_bytes / (1 << 20)
    print(f"pynuma bench memory: {mib:g} MiB buffer, {result.duration_s:g} s per measurement, "
          f"{result.threads} bandwidth thread(s), {'native' if result.native else 'pure-Python'} loops")
    lines = _table("latency (ns per dependent load)", result, result.latency_ns, ".1f")
    lines += _table("read bandwidth (GB/s)", result, result.read_gbps, ".2f")
    lines += _table("copy bandwidth (GB/s)", result, result.copy_gbps, ".2f")
    lines += _beside(result)
    lines += [f"warning: {w}" for w in result.warnings]
    print("\n".join(lines))
    return 0
