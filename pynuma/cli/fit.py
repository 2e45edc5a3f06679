"""``pynuma fit POD.yaml``: would the pod fit this node now, and if not, why not.

    pynuma fit pod.yaml --state-dir /var/lib/pynuma          # against the ledger
    pynuma fit pod.yaml --allocatable cpu=4,memory=8Gi,pods=110 [--existing running.yaml]
    pynuma fit pod.yaml --root /dump --json                  # allocatable discovered from a dump

The pod's hugepages are validated first (whole pages, requests equal
limits, cpu or memory alongside, emptyDir media matching a requested size),
then the kubelet's admission runs against node allocatable minus what is
already requested.  The answer names every failure as the scheduler words it
(``Insufficient cpu``, ``Too many pods``) and the kubelet's reason
(``OutOfcpu``, ``OutOfhugepages-1Gi``).  Exit 0 when every pod fits, 1 when
one does not, 2 on bad input.  Nothing is reserved.
"""
from __future__ import annotations

from . import _ledger as L
from ._common import add_json, add_root, parser, print_json


def _build_parser():
    p = parser("fit", "Would a pod fit this node, and why not (scheduler and kubelet reasons).")
    p.add_argument("pod", metavar="POD.yaml", help="pod manifest(s), YAML or JSON")
    L.add_state_dir(p, "check against the ledger in this directory")
    L.add_allocatable(p)
    p.add_argument("--existing", metavar="PODS.yaml", help="pods already on the node (without a ledger)")
    add_root(p)
    add_json(p)
    return p


def _node(args):
    from ..ledger.node import NodeState

    existing = L.load_manifests(args.existing) if args.existing else []
    if args.allocatable:
        return NodeState.build(L.parse_allocatable(args.allocatable), existing)
    alloc, unknown = L.discovered_allocatable(args.root, args.max_pods)
    return NodeState.build(alloc, existing, unknown=unknown)


def _describe(pod, r) -> str:
    head = f"pod {pod.namespace}/{pod.name}: "
    if r.fits:
        note = f" (not checked, allocatable unknown: {', '.join(r.unchecked)})" if r.unchecked else ""
        return head + "fits" + note
    lines = [head + f"does not fit: {r.reason}: {r.message}"]
    lines += [f"  {reason}" for reason in r.reasons]
    return "\n".join(lines)


def main(argv) -> int:
    args = _build_parser().parse_args(argv)
    from ..ledger.fit import fit

    pods = L.load_manifests(args.pod)
    if args.state_dir and not args.allocatable and not args.existing:
        with L.open_ledger(L.state_dir_or_fail(args), repair=False) as ledger:  # reads only
            results = [(p, ledger.fit(p)) for p in pods]
    else:
        node = _node(args)
        results = [(p, fit(p, node)) for p in pods]
    fits = all(r.fits for _, r in results)
    if args.json:
        print_json({"fits": fits, "pods": [{"pod": p.name, "namespace": p.namespace, "uid": p.uid, **r.to_json()}
                                           for p, r in results]})
    else:
        for p, r in results:
            print(_describe(p, r))
    return 0 if fits else 1
