"""``pynuma topology``: CPUs, caches, NUMA nodes, memory, hugepages and distances.

    pynuma topology                         # readable tree (machine > package > node > L3 > core > CPU)
    pynuma topology --json                  # one JSON object (Topology.to_dict())
    pynuma topology --distances             # the NUMA distance matrix as a table
    pynuma topology --root DUMP --json      # a saved /sys + /proc dump instead of this host
    pynuma topology --save topo.json        # write the JSON cache (atomically)
    pynuma topology --topology topo.json    # show a saved topology

The whole command must cost little more than the interpreter's start, so it
parses its few options by hand and writes JSON with its own small writer
(``pynuma.cli._jsonout``) instead of importing argparse and json.
"""

from ._streams import stderr, stdout

USAGE = ("usage: pynuma topology [--json | --distances | --devices] [--root DIR | --topology FILE] [--save FILE]")
HELP = USAGE + """

Show this machine's (or a dump's) CPUs, caches, NUMA nodes, memory, hugepages and distances.

options:
  --json           print one JSON object (the format --save writes and --topology reads)
  --distances      print the NUMA distance matrix as a table
  --devices        list PCI devices and network interfaces as tables (with --json: just those)
  --root DIR       directory playing the part of / (a saved /sys + /proc dump); default: the live host
  --topology FILE  load a topology saved with --save instead of discovering one
  --save FILE      write the topology as JSON to FILE (atomically) and say so on stderr
  -h, --help       show this help
"""

_FLAGS = ("--json", "--distances", "--devices")
_VALUES = ("--root", "--topology", "--save")


class _Usage(Exception):
    pass


def dumps(value, indent: int = 2) -> str:
    """JSON text of ``value`` as this command writes it (see ``pynuma.cli._jsonout``)."""
    from ._jsonout import dumps as _dumps

    return _dumps(value, indent)


def _parse_args(argv):
    opts = {"json": False, "distances": False, "devices": False, "root": None, "topology": None, "save": None, "help": False}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-h", "--help"):
            opts["help"] = True
            continue
        name, eq, value = arg.partition("=")
        if name in _FLAGS and not eq:
            opts[name[2:]] = True
        elif name in _VALUES:
            if not eq:
                if not args:
                    raise _Usage(f"argument {name}: expected one argument")
                value = args.pop(0)
            if not value:
                raise _Usage(f"argument {name}: empty value")
            opts[name[2:]] = value
        else:
            raise _Usage(f"unrecognized argument {arg!r}")
    if opts["json"] and opts["distances"]:
        raise _Usage("--json and --distances cannot be combined")
    if opts["devices"] and opts["distances"]:
        raise _Usage("--devices and --distances cannot be combined")
    if opts["root"] is not None and opts["topology"] is not None:
        raise _Usage("--root and --topology cannot be combined")
    return opts


def main(argv) -> int:
    try:
        opts = _parse_args(argv)
    except _Usage as err:
        stderr().write(f"pynuma topology: error: {err} (see 'pynuma topology --help')\n")
        return 2
    if opts["help"]:
        stdout().write(HELP)
        return 0
    return _run(opts)


def _run(opts: dict) -> int:
    machine_pools = None  # the machine-wide hugepage pools, when reading a host or dump
    capacity = None  # as saved, when loading a topology file
    if opts["topology"]:
        topo, capacity = _load(opts["topology"])
    else:
        topo, machine_pools = _discover(opts["root"] or "/", opts["json"] or bool(opts["save"]))
    if opts["devices"]:
        return _show_devices(topo, opts)
    data = None
    if opts["save"] or opts["json"]:
        data = topo.to_dict()
        data["hugepage_capacity"] = capacity or hugepage_capacity(topo, machine_pools)
    if opts["save"]:
        _save(opts["save"], data, topo)
        if not (opts["json"] or opts["distances"]):
            return 0
    if opts["json"]:
        from .._impl import native_available, native_in_use

        # which reader answered: shown, not saved (a saved topology is the machine's, whoever read it);
        # asked of the reader's area only: the other native modules cost this command ~6 ms to import
        shown = dict(data, native_reader={"built": native_available("fsread"), "in_use": native_in_use("fsread")})
        stdout().write(dumps(shown, indent=2) + "\n")
    elif opts["distances"]:
        stdout().write(render_distances(topo))
    else:
        from ._topology_tree import render_tree

        stdout().write(render_tree(topo))
    return 0


def _save(path: str, data: dict, topo) -> None:
    """Write ``data`` to ``path`` atomically and say on stderr what was written (stdout stays the output)."""
    from ..state.atomic import write_atomic

    try:
        write_atomic(path, dumps(data, indent=2) + "\n")
    except OSError as err:
        from ..errors import InputError, from_oserror

        if err.errno in (2, 20, 21):  # ENOENT, ENOTDIR, EISDIR: the argument names no writable file
            raise InputError(f"--save {path}: {err.strerror}") from None
        raise from_oserror(err, path) from None
    nodes = len(topo.numa_nodes)
    stderr().write(f"pynuma topology: saved {path}: {len(topo.online_cpus)} CPUs, {nodes} NUMA "
                     f"node{'s' if nodes != 1 else ''} (load it with --topology {path})\n")


def _show_devices(topo, opts) -> int:
    """``--devices``: tables (or JSON) of PCI devices and links; netlink for the live host's links."""
    from . import _devices

    if opts["topology"] is None and (opts["root"] or "/") == "/":
        topo = _devices.with_netlink(topo)
    if opts["save"]:
        _save(opts["save"], topo.to_dict(), topo)
    if opts["json"]:
        stdout().write(dumps({"devices": [d.to_dict() for d in topo.devices],
                                "net_interfaces": [n.to_dict() for n in topo.net_interfaces]}, indent=2) + "\n")
    else:
        stdout().write(_devices.render_devices(topo))
    return 0


def _discover(root: str, with_pools: bool):
    """``(topology, machine-wide hugepage pools or None)`` of ``root``."""
    import os

    if not os.path.isdir(root):
        from ..errors import InputError

        raise InputError(f"--root {root}: not a directory")
    from ..fsroot import FsRoot

    from ..discover import discover

    with FsRoot(root) as fs:
        topo = discover(fs)
        if not with_pools:
            return topo, None
        from ..discover.hugepages import global_pools

        return topo, global_pools(fs, [])


def _load(path: str):
    """``(topology, its saved hugepage capacity or None)`` from a ``--save`` file."""
    from ..errors import InputError, ParseError
    from ..inputfile import parse_json, read_capped
    from ..model import Topology

    try:
        text = read_capped(path).decode("utf-8")
    except OSError as err:
        raise InputError(f"--topology {path}: {err.strerror or err}") from None
    except ValueError as err:
        raise ParseError(path, f"not UTF-8 text: {err}") from None
    data = parse_json(path, text)
    if not isinstance(data, dict):
        raise ParseError(path, "not a pynuma topology: expected a JSON object")
    try:
        topo = Topology.from_dict(data)
        return topo, _saved_capacity(data.get("hugepage_capacity"), topo)
    except ValueError as err:
        raise ParseError(path, str(err)) from None


def _saved_capacity(saved, topo):
    """The saved ``hugepage_capacity`` (null or absent: computed again); ``ValueError`` naming a bad field.

    Its shape is :func:`hugepage_capacity`'s: ``{"total": {name: quantity}, "nodes": {"<id>": {name: quantity}}}``
    with every name and quantity a string, and the nodes those of the topology.
    """
    if saved is None:
        return None
    from .._docfields import shown_json

    if not isinstance(saved, dict):
        raise ValueError(f"hugepage_capacity: expected an object, got {shown_json(saved)}")
    for key in ("total", "nodes"):
        if key not in saved:
            raise ValueError(f"hugepage_capacity.{key}: missing")
    for key in saved:
        if key not in ("total", "nodes"):
            raise ValueError(f"hugepage_capacity: unknown key {shown_json(key)}")
    nodes = saved["nodes"]
    if not isinstance(nodes, dict):
        raise ValueError(f"hugepage_capacity.nodes: expected an object, got {shown_json(nodes)}")
    known = {str(n.id) for n in topo.numa_nodes}
    for nid, per in nodes.items():
        if nid not in known:
            raise ValueError(f"hugepage_capacity.nodes: {shown_json(nid)} is not one of the NUMA nodes")
        _quantities(per, f"hugepage_capacity.nodes[{shown_json(nid)}]")
    _quantities(saved["total"], "hugepage_capacity.total")
    return saved


def _quantities(value, where: str) -> None:
    """``{"hugepages-2Mi": "8Mi"}``: resource names and quantities, all strings."""
    from .._docfields import shown_json

    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {shown_json(value)}")
    for name, qty in value.items():
        if not isinstance(qty, str):
            raise ValueError(f"{where}[{shown_json(name)}]: expected a quantity string, got {shown_json(qty)}")


# -- hugepage capacity as Kubernetes resources --------------------------------
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _binary_si(n: int) -> str:
    """Canonical BinarySI quantity of a byte count (``str(Quantity(n, BINARY_SI))``: 2097152 -> ``2Mi``)."""
    if -1024 < n < 1024:
        # small values print in DecimalSI, as Kubernetes does (1000 is the one multiple of 1000 here)
        return "1k" if n == 1000 else "-1k" if n == -1000 else str(n)
    exp = 0
    while n % 1024 == 0 and exp < len(_BINARY_SUFFIXES) - 1:
        n //= 1024
        exp += 1
    return f"{n}{_BINARY_SUFFIXES[exp]}"


def hugepage_capacity(topo, machine_pools=None) -> dict:
    """``{"total": {"hugepages-2Mi": "8Mi"}, "nodes": {"0": {...}}}`` from the pools discovery read.

    The JSON form of :func:`pynuma.hugepages.pools.capacity_to_dict` (tests
    check they agree), computed from the reported nodes' pools instead of
    re-reading them and without that module's imports (~10 ms, most of this
    command's budget).  ``total`` is from ``machine_pools`` (``{size_kb:
    pool}`` of ``/sys/kernel/mm/hugepages``) when given, else (a saved
    topology) the sum of the nodes.  Every size is listed, even with 0 pages,
    as the kubelet reports capacity.
    """
    nodes: dict = {}
    total: dict = {}
    for node in topo.numa_nodes:
        per = {}
        for size, pool in sorted(node.hugepages.items()):
            name = "hugepages-" + _binary_si(size * 1024)
            per[name] = _binary_si(pool.total * size * 1024)
            total[size] = total.get(size, 0) + pool.total * size * 1024
        nodes[str(node.id)] = per
    if machine_pools is not None:
        total = {size: pool.total * size * 1024 for size, pool in machine_pools.items()}
    return {"total": {"hugepages-" + _binary_si(size * 1024): _binary_si(b) for size, b in sorted(total.items())},
            "nodes": nodes}


def render_distances(topo) -> str:
    """The distance matrix as a table (one line when there is none)."""
    d = topo.distances
    if d is None:
        nodes = len(topo.numa_nodes)
        if nodes < 2:
            return f"no NUMA distances: this machine has {nodes} NUMA node{'' if nodes == 1 else 's'}\n"
        why = [w for w in topo.warnings if "distance" in w.lower() or "slit" in w.lower()]
        return (f"no NUMA distances: {nodes} nodes, but neither nodeN/distance nor an ACPI SLIT gave a valid "
                f"matrix" + (f" ({why[0]})" if why else "") + "\n")
    width = max(4, max(len(str(v)) for row in d.matrix for v in row) + 1, max(len(str(n)) for n in d.nodes) + 2)
    lines = [f"node distances (source: {d.source})", "node" + "".join(f"{n:>{width}}" for n in d.nodes)]
    for n, row in zip(d.nodes, d.matrix):
        lines.append(f"{n:>4}" + "".join(f"{v:>{width}}" for v in row))
    return "\n".join(lines) + "\n"
