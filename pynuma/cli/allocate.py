"""``pynuma allocate cpus``: pick CPUs as the kubelet's CPU Manager static policy would.

    pynuma allocate cpus --count 4 --topology topo.json
    pynuma allocate cpus --count 4 --available 2-15 --reserved 0,8 --option full-pcpus-only
    pynuma allocate cpus --count 8 --numa 1 --root /path/to/dump --json
    pynuma allocate cpus --count 2 --num-reserved 2 --topology topo.json

The request is one Guaranteed container asking for ``--count`` exclusive
CPUs; the shared pool is ``--available`` (default: every CPU) minus
``--reserved``.  ``--option NAME[=VALUE]`` takes the kubelet's
``cpuManagerPolicyOptions`` (every level accepted, as if the alpha and beta
feature gates were on) plus ``cpu-group-size=N``, which runs the
distributed algorithm with that group size as the kubelet's own tests do.
Prints the cpulist; exits 1 with the kubelet's reason when it cannot be
satisfied, 2 on bad input.
"""
from __future__ import annotations

from ..errors import InputError
from ._common import add_json, add_topology_source, parser, print_json

GROUP_SIZE_OPTIONS = ("cpu-group-size", "cpu_group_size")


def _build_parser():
    p = parser("allocate", "Pick exclusive CPUs as the kubelet's CPU Manager static policy would.")
    sub = p.add_subparsers(dest="what", metavar="cpus")
    sub.required = True
    c = sub.add_parser("cpus", help="pick CPUs for one Guaranteed container")
    c.add_argument("--count", required=True, metavar="N", help="number of exclusive CPUs to pick")
    c.add_argument("--available", metavar="LIST", help="free CPUs (cpulist); default: every CPU")
    res = c.add_mutually_exclusive_group()
    res.add_argument("--reserved", metavar="LIST", help="reserved CPUs, never given out (cpulist)")
    res.add_argument("--num-reserved", metavar="N", type=int,
                     help="reserve N CPUs picked as the kubelet picks them (kube/system-reserved cpu)")
    c.add_argument("--option", action="append", default=[], metavar="NAME[=VALUE]",
                   help="CPU Manager policy option (repeatable), e.g. full-pcpus-only or "
                        "distribute-cpus-across-numa=true")
    c.add_argument("--numa", metavar="LIST",
                   help="Topology Manager affinity: take CPUs from these NUMA nodes first")
    add_topology_source(c)
    add_json(c)
    return p


def _cpulist(text, what, topo=None):
    from ..cpuset import CPUSet

    try:
        cpus = CPUSet.parse(text)
    except ValueError as err:
        raise InputError(f"{what}: bad cpulist {text!r}: {err}") from None
    if topo is not None:
        unknown = cpus - topo.cpus()
        if unknown:
            raise InputError(f"{what}: CPUs {unknown} are not in the topology (CPUs {topo.cpus()})")
    return cpus


def _options(raw):
    from ..policy.cpumanager.options import ALL_GATES_ON, parse_options

    values, group = {}, None
    for item in raw:
        name, eq, value = item.partition("=")
        name = name.strip()
        if name in GROUP_SIZE_OPTIONS:
            try:
                group = int(value)
            except ValueError:
                group = 0
            if group < 1:
                raise InputError(f"--option {item}: the group size must be a positive integer")
            continue
        values[name] = value.strip() if eq else "true"
    return parse_options(values, ALL_GATES_ON), group


def _count(text, topo):
    try:
        n = int(text)
    except ValueError:
        raise InputError(f"--count: expected a whole number of CPUs, got {text!r}") from None
    if n < 1:
        # the kubelet gives a container exclusive CPUs only for a positive integer request
        raise InputError(f"--count: expected at least 1 CPU, got {n}")
    total = len(topo.cpus())
    if n > total:
        raise InputError(f"--count: {n} CPUs requested but the machine has only {total}")
    return n


def main(argv) -> int:
    args = _build_parser().parse_args(argv)
    from ..cpuset import CPUSet
    from ..policy.cpumanager.distribute import take_distributed
    from ..policy.cpumanager.options import validate_options
    from ..policy.cpumanager.static_policy import CPUState, StaticPolicy
    from ..pod import Container, Pod
    from ..quantity import Quantity
    from ..topology_file import cpu_topology_for

    opts, group = _options(args.option)
    topo = cpu_topology_for(args.topology, args.root)
    validate_options(opts, topo)
    count = _count(args.count, topo)
    available = _cpulist(args.available, "--available", topo) if args.available is not None else topo.cpus()
    reserved = _cpulist(args.reserved, "--reserved", topo) if args.reserved else CPUSet()
    if args.num_reserved is not None:
        if not 0 <= args.num_reserved <= len(topo.cpus()):
            raise InputError(f"--num-reserved: {args.num_reserved} is not between 0 and {len(topo.cpus())}")
        reserved = StaticPolicy(topo, num_reserved=args.num_reserved, options=opts).reserved
    nodes = None
    if args.numa is not None:
        nodes = _cpulist(args.numa, "--numa")
        unknown = nodes - CPUSet(topo.numa_nodes())
        if unknown:
            raise InputError(f"--numa: NUMA nodes {unknown} hold no CPUs in the topology")
    if group is not None:
        # The raw distributed algorithm, as the kubelet's tests call it.
        cpus = take_distributed(topo, available - reserved, count, group,
                                opts.distribute_cpus_across_cores)
    else:
        policy = StaticPolicy(topo, num_reserved=len(reserved), reserved=reserved, options=opts)
        state = CPUState(available | reserved)
        q = Quantity.parse(str(count))
        container = Container(name="c", requests={"cpu": q, "memory": Quantity.parse("1Gi")},
                              limits={"cpu": q, "memory": Quantity.parse("1Gi")})
        pod = Pod(name="p", uid="p", containers=(container,))
        cpus = policy.allocate(state, pod, container, None if nodes is None else list(nodes)) or CPUSet()
    if args.json:
        print_json({"cpus": str(cpus), "count": len(cpus), "reserved": str(reserved),
                    "numa_nodes": sorted({topo.node_of(c) for c in cpus}),
                    "options": opts.as_flags()})
    else:
        print(str(cpus))
    return 0
