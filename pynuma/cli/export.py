"""``pynuma export``: the node as other tools read it -- NodeResourceTopology, Prometheus metrics.

    pynuma export nrt [--root DIR | --topology FILE] [--node-name NAME] [--policy P --scope S]
                      [--state-dir DIR] [--config KUBELET_CONFIG] [--format json|yaml] [--crd CRD.yaml]
    pynuma export prometheus --port PORT [--root DIR] [--address ADDR] [--config KUBELET_CONFIG]

``nrt`` prints the ``topology.node.k8s.io/v1alpha2`` object: one zone per
NUMA node with costs (distances) and cpu / memory / hugepages capacity,
allocatable (after reserved CPUs and ``reservedMemory`` of ``--config``)
and available (after what the CPU and Memory Manager checkpoints in
``--state-dir`` hold exclusively).  ``--crd`` checks it against the CRD's
v1alpha2 schema first (exit 1 when it does not fit).  ``prometheus``
serves the metrics until SIGTERM / Ctrl-C.
"""
from __future__ import annotations

from . import _common
from ._streams import stderr, stdout


def _parser():
    p = _common.parser("export", __doc__.splitlines()[0].split(": ", 1)[1])
    sub = p.add_subparsers(dest="what", metavar="{nrt,prometheus}")
    sub.required = True
    nrt = sub.add_parser("nrt", help="print the NodeResourceTopology (v1alpha2) object")
    _common.add_topology_source(nrt, cpus_only=False)
    nrt.add_argument("--node-name", metavar="NAME", help="metadata.name (default: the host name under --root)")
    nrt.add_argument("--policy", metavar="P", choices=("none", "best-effort", "restricted", "single-numa-node"),
                     help="topologyManagerPolicy attribute (default: --config's, else none)")
    nrt.add_argument("--scope", metavar="S", choices=("container", "pod"),
                     help="topologyManagerScope attribute (default: --config's, else container)")
    nrt.add_argument("--state-dir", metavar="DIR", help="directory holding cpu_manager_state / memory_manager_state")
    nrt.add_argument("--config", metavar="FILE", help="KubeletConfiguration: reserved CPUs and memory, policies")
    nrt.add_argument("--format", choices=("json", "yaml"), default="json")
    nrt.add_argument("--crd", metavar="FILE", help="validate against this CRD's v1alpha2 schema before printing")
    prom = sub.add_parser("prometheus", help="serve the node's metrics for Prometheus")
    prom.add_argument("--port", metavar="PORT", type=int, required=True)
    prom.add_argument("--address", metavar="ADDR", default="0.0.0.0", help="listen address (default 0.0.0.0)")
    prom.add_argument("--config", metavar="FILE", help="KubeletConfiguration (thresholds, periods)")
    prom.add_argument("--node-name", metavar="NAME")
    _common.add_root(prom)
    return p


def _topology(args):
    from ..discover import discover
    from ..errors import InputError

    if args.topology:
        from ..inputfile import load_json
        from ..model import Topology

        data = load_json(args.topology)
        try:
            return Topology.from_dict(data)
        except ValueError as err:
            hint = ""
            if isinstance(data, dict) and "cpus" in data and "numa_nodes" not in data:
                hint = " (a kubelet-style CPU topology has no memory per node: save one with 'pynuma topology --json')"
            raise InputError(f"{args.topology}: {err}{hint}") from None
    return discover(args.root or "/")


def _node_name(args) -> str:
    from ..agent.nodeinfo import node_name
    from ..fsroot import FsRoot

    if getattr(args, "topology", None) and not args.node_name:
        return "localhost"
    with FsRoot(getattr(args, "root", None) or "/") as fs:
        return node_name(fs, args.node_name)


def nrt_main(args) -> int:
    from ..agent.config import load_agent_config
    from ..export.nrt import Holdings, build_nrt, reserved_memory_by_node

    config = load_agent_config(args.config) if args.config else None
    topology = _topology(args)
    if args.state_dir:
        from ._ledger import existing_state_dir

        existing_state_dir(args.state_dir)
        from ..export.nrt import holdings_from_state_dir

        holdings = holdings_from_state_dir(args.state_dir, topology, config)
    elif config is not None:
        from ..agent.admission import cpu_policy_for
        from ..cpuset import CPUSet

        holdings = Holdings(getattr(cpu_policy_for(topology, config), "reserved", CPUSet()),
                            reserved_memory=reserved_memory_by_node(config.reserved_memory))
    else:
        holdings = Holdings()
    policy = args.policy or (config.topology_manager_policy if config else "none")
    scope = args.scope or (config.topology_manager_scope if config else "container")
    obj = build_nrt(topology, _node_name(args), policy, scope, holdings)
    if args.crd:
        from ..export.validate import nrt_errors, nrt_schema

        errors = nrt_errors(obj, nrt_schema(args.crd), args.crd)
        if errors:
            print(f"pynuma export nrt: error: does not fit {args.crd}: {errors[0]}"
                  + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""), file=stderr())
            return 1
    if args.format == "yaml":
        import yaml

        stdout().write(yaml.safe_dump(obj, sort_keys=False))
    else:
        _common.print_json(obj)
    return 0


def prometheus_main(args) -> int:
    from ..errors import InputError

    if not 0 < args.port < 65536:
        raise InputError(f"--port: must be 1-65535, got {args.port}")
    from .agent import serve

    return serve(root=args.root, config=args.config, node_name=args.node_name, state_dir=None, output_dir=None,
                 metrics_port=args.port, metrics_address=args.address, once=False)


def main(argv) -> int:
    args = _parser().parse_args(argv)
    if args.what == "nrt":
        return nrt_main(args)
    return prometheus_main(args)
