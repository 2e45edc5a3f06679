"""``pynuma hugepages``: show hugepage pools per size and NUMA node; ``set`` resizes one.

    pynuma hugepages [--json] [--root DIR]
    pynuma hugepages set 2Mi=512 [--node N] [--dry-run] [--force] [--json] [--root DIR]
"""
from __future__ import annotations

from . import _common
from ._streams import stderr


def _size_label(size_kb: int) -> str:
    from ..hugepages.resources import PREFIX, resource_name_for_kb

    return resource_name_for_kb(size_kb)[len(PREFIX):]


def _show_parser():
    p = _common.parser("hugepages", "Show hugepage pools per size and NUMA node "
                                    "(use 'pynuma hugepages set SIZE=COUNT' to resize one).")
    _common.add_root(p)
    _common.add_json(p)
    return p


def _set_parser():
    p = _common.parser("hugepages set", "Resize a hugepage pool: writes nr_hugepages, reads back what the "
                                        "kernel gave; exit 1 when it gave fewer pages.")
    p.add_argument("pools", nargs="+", metavar="SIZE=COUNT", help="e.g. 2Mi=512, 1Gi=4, 2048kB=100")
    p.add_argument("--node", type=int, metavar="N", help="resize the pool of NUMA node N (default: machine-wide)")
    p.add_argument("--dry-run", action="store_true", help="say what would be written, write nothing")
    p.add_argument("--force", action="store_true", help="allow going below the pages in use")
    _common.add_root(p)
    p.add_argument("--target-root", action="store_true",
                   help="write under --root DIR (a fake root): without it, only the live host is written")
    _common.add_json(p)
    return p


def _fmt(v) -> str:
    return "-" if v is None else str(v)


def _table(info) -> str:
    cmd = info.cmdline.resolved(info.default_size_kb)
    rows = [("SIZE", "NODE", "TOTAL", "FREE", "IN-USE", "RESERVED", "SURPLUS", "OVERCOMMIT", "CMDLINE")]
    for size in info.sizes:
        label = _size_label(size)
        asked = cmd.get(size)
        g = info.pools.get(size)
        if g is not None:
            rows.append((label, "all", str(g.total), str(g.free), str(g.in_use), _fmt(g.reserved), str(g.surplus),
                         _fmt(g.overcommit), _fmt(asked.total if asked else None)))
        for nid, per in sorted(info.nodes.items()):
            p = per.get(size)
            if p is None:
                continue
            node_ask = asked.per_node.get(nid) if asked and asked.per_node else None
            rows.append((label, str(nid), str(p.total), str(p.free), str(p.in_use), "-", str(p.surplus), "-",
                         _fmt(node_ask)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    if not info.sizes:
        lines = ["no hugepage pools (the kernel has no /sys/kernel/mm/hugepages)"]
    default = info.default_size_kb
    lines.append("")
    lines.append(f"default size: {_size_label(default)} ({default} kB)" if default else "default size: unknown")
    if cmd or info.cmdline.default_size_kb:
        parts = []
        if info.cmdline.default_size_kb:
            parts.append(f"default_hugepagesz={_size_label(info.cmdline.default_size_kb)}")
        for size, c in sorted(cmd.items()):
            ask = str(c.count) if c.count is not None else ",".join(f"{n}:{v}" for n, v in sorted(c.per_node.items()))
            held = info.pools.get(size)
            parts.append(f"{_size_label(size)}: asked {ask}, kernel holds {held.total if held else 'no pool'}")
        lines.append("kernel command line: " + "; ".join(parts))
    else:
        lines.append("kernel command line: no hugepage options")
    for w in info.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def _show(argv) -> int:
    args = _show_parser().parse_args(argv)
    from ..fsroot import FsRoot
    from ..machine_root import require_machine_root
    from ..hugepages.pools import read_hugepages

    with FsRoot(args.root) as fs:
        require_machine_root(fs)
        info = read_hugepages(fs)
    if args.json:
        _common.print_json(info.to_dict())
    else:
        print(_table(info))
    return 0


def _parse_item(text: str):
    from ..errors import InputError

    size, sep, count = text.partition("=")
    if not sep or not size.strip():
        raise InputError(f"{text!r}: expected SIZE=COUNT, e.g. 2Mi=512")
    count = count.strip()
    if not count.isdigit() or not count.isascii():
        raise InputError(f"{text!r}: the page count must be a non-negative integer")
    if len(count) > 18:  # more pages than any machine's memory holds (and int() refuses 4,300+ digits)
        from ..parse import shown

        raise InputError(f"{shown(text)}: the page count is too large")
    return size.strip(), int(count)


def _set(argv) -> int:
    args = _set_parser().parse_args(argv)
    from ..fsroot import FsRoot
    from ..hugepages.allocate import set_pool
    from ..machine_root import require_machine_root
    from ..hugepages.pools import parse_size_arg, read_hugepages

    items = [_parse_item(t) for t in args.pools]
    results = []
    with FsRoot(args.root) as fs:
        require_machine_root(fs)
        info = read_hugepages(fs)
        sizes = info.sizes if args.node is None else tuple(info.nodes.get(args.node, {}))
        if args.node is not None and args.node not in info.nodes:
            from ..errors import InputError

            raise InputError(f"--node {args.node}: no such NUMA node (nodes: "
                             f"{', '.join(map(str, sorted(info.nodes))) or 'none'})")
        planned = [(parse_size_arg(size, sizes), count) for size, count in items]
        if not (fs.is_host or args.dry_run or args.target_root):
            from ..errors import FakeRootRefused

            raise FakeRootRefused(f"--root {args.root} is not this host: resizing its pools needs --target-root "
                                  "(or --dry-run)")
        for size_kb, count in planned:
            results.append(set_pool(fs, size_kb, count, node=args.node, dry_run=args.dry_run, force=args.force))
    short = [r for r in results if r.shortfall]
    if args.json:
        _common.print_json({"results": [r.to_dict() for r in results], "ok": not short})
    else:
        for r in results:
            print(r.describe())
    for r in short:
        print(f"pynuma hugepages set: error: {_size_label(r.size_kb)}: asked for {r.requested} pages, the kernel gave "
              f"{r.after} (short by {r.shortfall}; memory may be fragmented)", file=stderr())
    return 1 if short else 0


def main(argv) -> int:
    argv = list(argv)
    if argv and argv[0] == "set":
        return _set(argv[1:])
    if argv and argv[0] == "show":
        argv = argv[1:]
    return _show(argv)
