"""``pynuma admit``: would the kubelet admit this pod here, and with which CPUs, memory and devices?

    pynuma admit pod.yaml --policy restricted --reserved-cpus 0,1 --topology topo.json
    pynuma admit pods.yaml --scope pod --memory-policy static --reserved-memory 0:memory=1Gi --root /dump --json
    pynuma admit pod.yaml --state-dir /var/lib/kubelet --commit      # record the allocation

Per container: each provider's hints, the merged hint, the exclusive CPUs
(static CPU policy), the memory blocks (static Memory Manager, with
``--memory-policy static``) and devices (``--devices FILE``: JSON list of
``{resource, id, numa}``), then admit or reject with the kubelet's reason.
Several pods in the file are admitted in order against the same state.
Fit comes first: a pod that does not fit node allocatable minus what is
already requested is refused with the kubelet's reason (``OutOfcpu``,
``OutOfhugepages-1Gi``) before any manager sees it.  ``--state-dir`` holds
the node's ledger and the checkpoint files derived from it; ``--commit``
enters every pod in the ledger, in one transaction, when every pod was
admitted, and rewrites ``cpu_manager_state`` / ``memory_manager_state``
from it (see :mod:`pynuma.cli._admit_ledger`).  Without a ledger the
checkpoint files of ``--state-dir`` are read as they are.
``--policy`` defaults to best-effort (the kubelet's default is none, which
computes no hints).  Exit 0 when every pod is admitted, 1 when one is
rejected, 2 on bad input.
"""
from __future__ import annotations

import os

from ..errors import InputError, ParseError
from ._common import add_json, add_topology_source, parser, print_json

CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"


def _build_parser():
    p = parser("admit", "Admit pods as the kubelet's Topology, CPU and Memory Managers would.")
    p.add_argument("pod", metavar="POD.yaml", help="pod manifest(s): YAML or JSON, one or more pods")
    p.add_argument("--policy", default="best-effort", metavar="P",
                   help="Topology Manager policy: none, best-effort (default), restricted, single-numa-node")
    p.add_argument("--scope", default="container", metavar="S", help="container (default) or pod")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="Topology Manager policy option (repeatable)")
    p.add_argument("--cpu-policy", default="static", choices=("static", "none"), help="CPU Manager policy")
    p.add_argument("--cpu-option", action="append", default=[], metavar="NAME[=VALUE]",
                   help="CPU Manager policy option (repeatable), e.g. full-pcpus-only")
    p.add_argument("--reserved-cpus", default="", metavar="LIST", help="reserved CPUs (cpulist)")
    p.add_argument("--memory-policy", default="none", choices=("none", "static"), help="Memory Manager policy")
    p.add_argument("--reserved-memory", default="", metavar="SPEC",
                   help="--reserved-memory of the kubelet, e.g. '0:memory=1Gi;1:memory=1Gi'")
    p.add_argument("--devices", metavar="FILE", help="JSON list of devices: [{resource, id, numa}]")
    p.add_argument("--state-dir", metavar="DIR", help="directory holding the kubelet's checkpoint files")
    p.add_argument("--commit", action="store_true",
                   help="enter the pods in the state dir's ledger and rewrite its checkpoint files")
    from ._ledger import add_allocatable

    add_allocatable(p)
    add_topology_source(p)
    add_json(p)
    return p


def _cpu_policy(args, topo, tm_policy):
    from ..policy.cpumanager.options import ALL_GATES_ON, parse_options
    from ..policy.cpumanager.static_policy import new_policy

    raw = {}
    for item in args.cpu_option:
        name, eq, value = item.partition("=")
        raw[name.strip()] = value.strip() if eq else "true"
    from ..config.kubelet import parse_reserved_cpus

    reserved = parse_reserved_cpus(args.reserved_cpus, "--reserved-cpus")
    if args.cpu_policy == "static":
        return new_policy("static", topo, num_reserved=len(reserved), reserved=reserved,
                          options=parse_options(raw, ALL_GATES_ON), topology_manager_policy=tm_policy)
    return new_policy("none", topo)


def _cpu_state_from_files(args, policy):
    from ..policy.cpumanager.static_policy import CPUState

    state = CPUState()
    path = os.path.join(args.state_dir, CPU_STATE) if args.state_dir else None
    if path and os.path.exists(path):
        from ..state.cpu_checkpoint import read_file

        restored = read_file(path, configured_policy=args.cpu_policy)
        state = CPUState(restored.default, restored.assignments)
    policy.start(state)
    return state


def _memory(args):
    from ..policy.memorymanager.manager import MemoryManager
    from ..state.machine import machine_for
    from ..policy.memorymanager.reserved import parse_reserved_memory

    if args.memory_policy == "static" and not args.reserved_memory:
        raise InputError("--memory-policy static needs --reserved-memory (the kubelet requires it)")
    if not args.reserved_memory:
        return None
    # checked whatever the policy, as the kubelet parses its flags before choosing a policy
    reservations = parse_reserved_memory(args.reserved_memory)
    machine = machine_for(args.topology, args.root or "/")
    nodes = sorted(n.id for n in machine)
    for r in reservations:
        if r.numa_node not in nodes:
            raise InputError(f"--reserved-memory: NUMA node {r.numa_node} does not exist "
                             f"(nodes: {', '.join(map(str, nodes))})")
    if args.memory_policy != "static":
        return None
    return MemoryManager.from_machine(machine, reservations)


def _inventory(args):
    if not args.devices:
        return None
    from ..inputfile import load_json
    from ..policy.devicemanager.inventory import DeviceInventory

    raw = load_json(args.devices)
    try:
        return DeviceInventory.from_json(raw)
    except ValueError as err:
        raise ParseError(args.devices, str(err)) from None


def _hint_text(h) -> str:
    if h is None:
        return "-"
    nodes = "any" if h["numa"] is None else ",".join(map(str, h["numa"])) or "none"
    return nodes + ("" if h["preferred"] else "~")


def _print_text(reports) -> None:
    from ._units import human_bytes

    for r in reports:
        state = "admitted" if r["admit"] else f"REJECTED: {r['reason']}: {r['message']}"
        # no policy: refused by the node's fit, before any manager ran
        where = f" ({r['policy']}, {r['scope']} scope)" if r["policy"] is not None else ""
        print(f"pod {r['pod']}{where}: {state}")
        if not r["containers"]:
            continue  # refused before any manager looked at a container: no table to show
        print(f"  {'KIND':<7} {'CONTAINER':<20} {'HINT':<8} {'CPUS':<12} {'MEMORY':<22} DEVICES")
        for c in r["containers"]:
            hints = []
            for prov, answer in c["hints"].items():
                if answer is None:
                    hints.append(f"{prov}=any")
                    continue
                for res, lst in answer.items():
                    shown = "any" if lst is None else ("none" if not lst else " ".join(_hint_text(h) for h in lst[:6]))
                    more = "" if lst is None or len(lst) <= 6 else f" +{len(lst) - 6}"
                    hints.append(f"{res}=[{shown}{more}]")
            mem = " ".join(f"{b['type']} {human_bytes(b['size'])} on {','.join(map(str, b['numa']))}"
                           for b in c["memory"]) or "-"
            devs = " ".join(f"{k}:{','.join(v)}" for k, v in c["devices"].items()) or "-"
            print(f"  {c['kind']:<7} {c['name']:<20} {_hint_text(c['hint']):<8} {c['cpus'] or 'shared':<12} "
                  f"{mem:<22} {devs}".rstrip())
            if hints:
                print(f"          hints: {'; '.join(hints)}")
        print("  (hints are NUMA node sets; ~ = not preferred)")


def main(argv) -> int:
    args = _build_parser().parse_args(argv)
    from ..pod import load_pods
    from ..policy.topologymanager.numa_info import NUMAInfo
    from ..policy.topologymanager.manager import TopologyManager
    from ..topology_file import cpu_topology_for
    from . import _admit_ledger as AL
    from ._ledger import ledger_path
    from .hints import parse_option_args

    if args.commit and not args.state_dir:
        raise InputError("--commit needs --state-dir DIR (where the checkpoint files live)")
    if args.state_dir:
        from ._ledger import existing_state_dir

        existing_state_dir(args.state_dir)
    pods = load_pods(args.pod, defaulted=True)  # as the API server hands them to the kubelet
    topo = cpu_topology_for(args.topology, args.root or "/")
    try:
        info = NUMAInfo.from_matrix(topo.machine_numa_nodes, topo.distances)
    except ValueError:
        info = NUMAInfo.from_matrix(topo.machine_numa_nodes, None)
    manager = TopologyManager.create(info, args.policy, args.scope, parse_option_args(args.option))
    policy = _cpu_policy(args, topo, args.policy)
    memory = _memory(args)
    inventory = _inventory(args)
    allocatable = AL.allocatable_for(args, topo)

    def providers(inv):
        from ..policy.devicemanager.inventory import DeviceHintProvider

        return None if inv is None else DeviceHintProvider(inv, info.nodes)

    if args.state_dir and (args.commit or os.path.exists(ledger_path(args.state_dir))):
        reports, committed = AL.admit_with_ledger(args, pods, manager, policy, memory, inventory, allocatable,
                                                  providers)
    else:
        reports, committed = _admit_in_memory(args, pods, manager, policy, memory, inventory, allocatable,
                                              providers), False
    admitted = all(r["admit"] for r in reports)
    if args.json:
        print_json({"admit": admitted, "committed": committed, "pods": reports})
    else:
        _print_text(reports)
        if args.commit:
            print("committed to " + args.state_dir if committed else "nothing committed (a pod was rejected)")
    return 0 if admitted else 1


def _admit_in_memory(args, pods, manager, policy, memory, inventory, allocatable, providers):
    """No ledger: start from the state dir's files (if any), admit in order, write nothing."""
    from ..ledger.node import NodeState
    from ..state.memory_checkpoint import restore_manager
    from . import _admit_ledger as AL

    state = _cpu_state_from_files(args, policy)
    if memory is not None and args.state_dir:
        path = os.path.join(args.state_dir, MEMORY_STATE)
        if os.path.exists(path):
            restore_manager(memory, path)
    devices = providers(inventory)
    alloc, partial, unknown = allocatable
    admitted, reports = [], []
    for pod in pods:
        node = NodeState.build(alloc, admitted, partial=partial, unknown=unknown)
        report, ok = AL.admit_one(pod, node, manager, (policy, state), memory, devices)
        reports.append(report)
        if ok:
            admitted.append(pod)
    return reports
