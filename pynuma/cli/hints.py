"""``pynuma hints merge``: merge providers' topology hints as the kubelet's Topology Manager would.

    pynuma hints merge --policy restricted --hints hints.json --topology topo.json
    pynuma hints merge --policy best-effort --option prefer-closest-numa-nodes=true --hints h.json --root /dump

``--hints FILE`` holds one object per hint provider, in provider order::

    [{"cpu": [{"numa": [0], "preferred": true}, {"numa": [0, 1], "preferred": false}]},
     {"example.com/gpu": null},           # no preference
     {"memory": []}]                      # no possible placement

NUMA nodes (and distances, for ``prefer-closest-numa-nodes``) come from
``--topology FILE`` (saved ``pynuma topology --json`` or the kubelet-style
CPU topology form), ``--root DIR`` or the live host.  Prints the merged
hint and the decision; ``--json`` prints
``{"hint": {"numa": [...] | null, "preferred": bool}, "admit": bool, "exact": bool}``
(``exact`` false: on a huge machine the merge answered from its bounded search).
Exit 0 when the pod would be admitted, 1 when the policy rejects it;
unknown policy or option, or a malformed hints file: one line, exit 2.
"""
from __future__ import annotations

from ..errors import InputError, ParseError
from ._common import add_json, add_topology_source, parser, print_json


def _build_parser():
    p = parser("hints", "Merge topology hints as the kubelet's Topology Manager would.")
    sub = p.add_subparsers(dest="what", metavar="merge")
    sub.required = True
    m = sub.add_parser("merge", help="merge providers' hints into the best hint and the admit decision")
    m.add_argument("--policy", required=True, metavar="P",
                   help="none, best-effort, restricted or single-numa-node")
    m.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="Topology Manager policy option (repeatable): prefer-closest-numa-nodes=true, "
                        "max-allowable-numa-nodes=N")
    m.add_argument("--scope", default="container", metavar="S", help="container (default) or pod")
    m.add_argument("--hints", required=True, metavar="FILE", help="JSON list: one {resource: hints|null} per provider")
    add_topology_source(m)
    add_json(m)
    return p


def parse_option_args(items) -> dict:
    """``["name=value", "name"]`` -> the kubelet's option string map (bare name = "true")."""
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not name:
            raise InputError(f"--option {item!r}: expected NAME=VALUE")
        out[name] = value.strip() if eq else "true"
    return out


def load_hints_file(path: str) -> list:
    """The providers' answers in ``path``; ``ParseError`` naming the file and the bad item."""
    from ..inputfile import load_json
    from ..policy.topologymanager.hints import provider_hints_from_json

    data = load_json(path)
    if not isinstance(data, list):
        raise ParseError(path, "expected a JSON list with one object per hint provider")
    try:
        return [provider_hints_from_json(p, f"provider[{i}]") for i, p in enumerate(data)]
    except ValueError as err:
        raise ParseError(path, str(err)) from None


def check_hint_nodes(providers: list, nodes, path: str) -> None:
    """``ParseError`` naming ``path`` and the hint when a hint names a NUMA node the machine lacks."""
    known = set(nodes)
    for i, provider in enumerate(providers):
        for res, hints in (provider or {}).items():
            for j, hint in enumerate(hints or ()):
                if hint.numa_affinity is None:
                    continue
                missing = sorted(set(hint.numa_affinity) - known)
                if missing:
                    have = ",".join(map(str, sorted(known))) or "none"
                    raise ParseError(path, f"provider[{i}].{res}[{j}].numa: NUMA node(s) "
                                           f"{','.join(map(str, missing))} not in the topology (nodes {have})")


def numa_info_for(topology_file, root):
    """NUMA nodes and distances from ``--topology`` / ``--root`` / the live host."""
    from ..policy.topologymanager.numa_info import NUMAInfo
    from ..topology_file import cpu_topology_for

    topo = cpu_topology_for(topology_file, root or "/")
    try:
        return NUMAInfo.from_matrix(topo.machine_numa_nodes, topo.distances)
    except ValueError:  # a matrix that does not fit the nodes: merge without distances
        return NUMAInfo.from_matrix(topo.machine_numa_nodes, None)


def main(argv) -> int:
    args = _build_parser().parse_args(argv)
    from ..policy.topologymanager.manager import TopologyManager

    options = parse_option_args(args.option)
    providers = load_hints_file(args.hints)
    info = numa_info_for(args.topology, args.root)
    check_hint_nodes(providers, info.nodes, args.hints)
    manager = TopologyManager.create(info, args.policy, args.scope, options)
    hint, admit, exact = manager.merge_ex(providers)
    if args.json:
        print_json({"hint": hint.to_json(), "admit": admit, "exact": exact})
    else:
        numa = hint.numa_affinity
        nodes = "any NUMA node" if numa is None else "NUMA node " + ",".join(map(str, numa))
        print(f"hint: {nodes} ({'preferred' if hint.preferred else 'not preferred'})")
        if not exact:
            print("(a bounded search answered: this machine's hint lists are too long for an exact merge)")
        print(f"admitted by the {args.policy} policy" if admit else
              f"rejected by the {args.policy} policy: TopologyAffinityError "
              "(Resources cannot be allocated with Topology locality)")
    return 0 if admit else 1
