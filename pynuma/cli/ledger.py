"""``pynuma ledger``: the node's resource ledger (what every admitted or assumed pod holds).

    pynuma ledger init   --state-dir DIR [--allocatable cpu=8,memory=30Gi,pods=110 | --root DIR]
                         [--pci-resource 10de=nvidia.com/gpu] [--pci-map FILE]
    pynuma ledger show   --state-dir DIR [--json]
    pynuma ledger assume POD.yaml --state-dir DIR [--ttl SECONDS] [--bind] [--json]
    pynuma ledger bind   POD_UID --state-dir DIR
    pynuma ledger forget POD_UID --state-dir DIR
    pynuma ledger expire --state-dir DIR [--now EPOCH_SECONDS]

``assume`` reserves a pod's requests if it fits what the node has left
(exit 1 with the kubelet's reason when not); ``bind`` confirms it,
``forget`` rolls it back, ``expire`` drops assumptions whose ``--ttl`` ran
out.  ``pynuma release POD_UID`` removes a pod.  Every change is one
transaction shared with every other process on the node.
"""
from __future__ import annotations

from ..errors import InputError
from . import _ledger as L
from ._common import add_json, add_root, parser, print_json


def _build_parser():
    p = parser("ledger", "The node's resource ledger: show, init, assume, bind, forget, expire.")
    sub = p.add_subparsers(dest="action", metavar="{show,init,assume,bind,forget,expire}")
    sub.required = True
    show = sub.add_parser("show", help="node allocatable, requested, free, and every pod in the ledger")
    init = sub.add_parser("init", help="set node allocatable and the devices offered as extended resources")
    L.add_allocatable(init)
    add_root(init)
    init.add_argument("--pci-resource", action="append", default=[], metavar="MATCH=RESOURCE",
                      help="offer matching PCI devices as an extended resource: 10de=nvidia.com/gpu, "
                           "8086:1572=intel.com/nic, class:0302=example.com/gpu (repeatable)")
    init.add_argument("--pci-map", metavar="FILE", help="the same rules as a JSON/YAML list")
    init.add_argument("--node-name", metavar="NAME", help="the node's name (for pods with spec.nodeName)")
    assume = sub.add_parser("assume", help="reserve a pod's requests if it fits (one transaction)")
    assume.add_argument("pod", metavar="POD.yaml")
    assume.add_argument("--ttl", type=float, metavar="SECONDS", help="expire the assumption after this long")
    assume.add_argument("--bind", action="store_true", help="record the pod bound at once")
    for name, text in (("bind", "confirm an assumed pod"), ("forget", "roll back an assumed pod")):
        s = sub.add_parser(name, help=text)
        s.add_argument("uid", metavar="POD_UID")
    expire = sub.add_parser("expire", help="drop assumptions whose ttl ran out")
    expire.add_argument("--now", type=float, metavar="EPOCH_SECONDS", help="the time to expire at (default: now)")
    for s in (show, init, assume, sub.choices["bind"], sub.choices["forget"], expire):
        L.add_state_dir(s)
        add_json(s)
    return p


def _show(ledger, args) -> int:
    view = ledger.snapshot()
    alloc = view.config.effective_allocatable()
    requested = view.requested()
    free = None if alloc is None else {k: alloc.get(k, 0) - requested.get(k, 0) for k in alloc if k != "pods"}
    if free is not None and "pods" in alloc:
        free["pods"] = alloc["pods"] - len(view.entries)
    if args.json:
        print_json({"ledger": ledger.path, "generation": view.generation, "allocatable": L.quantities_json(alloc),
                    "requested": L.quantities_json(requested), "free": L.quantities_json(free),
                    "pods": len(view.entries), "devices": list(view.config.devices),
                    "entries": [e.to_json() for e in view.entries]})
        return 0
    print(f"ledger {ledger.path} (generation {view.generation}, {len(view.entries)} pods)")
    if alloc is None:
        print("allocatable: not set (pynuma ledger init)")
    else:
        names = sorted(set(alloc) | set(requested))
        a, r, f = L.quantities_json(alloc), L.quantities_json(requested) or {}, L.quantities_json(free)
        r["pods"] = str(len(view.entries))
        L.print_table(["RESOURCE", "ALLOCATABLE", "REQUESTED", "FREE"],
                      [[n, a.get(n, "-"), r.get(n, "0"), f.get(n, "-")] for n in names])
    if view.entries:
        print()
        L.print_table(["UID", "POD", "STATE", "REQUESTS", "HOLDS"], L.entry_rows(view.entries))
    return 0


def _init(ledger, args) -> int:
    from ..ledger.devices import offered_devices, parse_rules, rules_from_json

    rules = parse_rules(args.pci_resource)
    if args.pci_map:
        from ..inputfile import load_items

        rules += rules_from_json(list(load_items(args.pci_map)), args.pci_map)
    changes = {}
    if args.allocatable:
        alloc = L.parse_allocatable(args.allocatable)
    else:
        alloc, unknown = L.discovered_allocatable(args.root, args.max_pods)
        changes["unknown"] = list(unknown)
    if rules:
        from ..discover.devices import discover_devices
        from ..fsroot import FsRoot

        with FsRoot(args.root) as fs:
            changes["devices"] = offered_devices(discover_devices(fs), rules)
    if args.node_name is not None:
        changes["node_name"] = args.node_name
    ledger.configure(alloc, **changes)
    return _show(ledger, args)


def _assume(ledger, args) -> int:
    from ..ledger.errors import FitError

    pods = L.load_manifests(args.pod)
    if args.ttl is not None and not 0 <= args.ttl < 1e9:  # also refuses nan
        raise InputError(f"--ttl: must be between 0 and 1e9 seconds, got {args.ttl}")
    done = []
    try:
        with ledger.transaction() as tx:
            for pod in pods:
                done.append(tx.assume(pod, args.ttl, bind=args.bind))
    except FitError as err:
        if args.json:
            print_json({"assumed": [], "fits": False, "pod": err.args[0], "fit": err.result.to_json()})
        else:
            print(f"not assumed: {err}")
        return 1
    if args.json:
        print_json({"assumed": [e.to_json() for e in done], "fits": True})
    else:
        for e in done:
            print(f"{e.state} {e.namespace}/{e.name} ({e.uid})" + (f", expires at {e.deadline:.3f}" if e.deadline else ""))
    return 0


def _one(action):
    def run(ledger, args) -> int:
        entry = getattr(ledger, action)(args.uid)
        if args.json:
            print_json({"action": action, "entry": entry.to_json()})
        else:
            print(f"{action}: {entry.namespace}/{entry.name} ({entry.uid}), now "
                  f"{'bound' if action == 'bind' else 'gone'}")
        return 0
    return run


def _expire(ledger, args) -> int:
    import math

    if args.now is not None and not (math.isfinite(args.now) and args.now >= 0):
        raise InputError(f"--now: expected epoch seconds, got {args.now}")
    gone = ledger.expire(args.now)
    if args.json:
        print_json({"expired": [e.to_json() for e in gone]})
    else:
        print(f"expired {len(gone)} assumption(s)" + "".join(f"\n  {e.namespace}/{e.name} ({e.uid})" for e in gone))
    return 0


ACTIONS = {"show": _show, "init": _init, "assume": _assume, "bind": _one("bind"), "forget": _one("forget"),
           "expire": _expire}


def main(argv) -> int:
    args = _build_parser().parse_args(argv)
    state_dir = L.state_dir_or_fail(args)
    # show only reads: it neither waits for a writer's lock nor rewrites the checkpoint files
    with L.open_ledger(state_dir, repair=args.action != "show") as ledger:
        return ACTIONS[args.action](ledger, args)
