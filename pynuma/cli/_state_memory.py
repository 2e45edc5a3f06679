"""``pynuma state show|check`` for the kubelet's ``memory_manager_state`` (registered in ``state.py``)."""
from __future__ import annotations

from ._common import print_json

_POLICY_NAMES = {"static": "Static", "none": "None", "besteffort": "BestEffort", "best-effort": "BestEffort"}


def _size(n: int) -> str:
    from ._units import human_bytes

    return human_bytes(n)


def _rows(state):
    rows = [("NODE", "RESOURCE", "TOTAL", "SYS-RESERVED", "ALLOCATABLE", "RESERVED", "FREE", "BLOCKS", "GROUP")]
    for nid, node in sorted((state.machine_state or {}).items()):
        for res, t in sorted((node.memory_map or {}).items(), key=lambda kv: (kv[0] != "memory", kv[0])):
            rows.append((str(nid), res, _size(t.total), _size(t.system_reserved), _size(t.allocatable),
                         _size(t.reserved), _size(t.free), str(node.number_of_assignments),
                         ",".join(map(str, node.cells or []))))
    return rows


def _print_table(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


def show(args, text, doc) -> int:
    from ..policy.memorymanager.state import assignments_to_dict, machine_state_to_dict
    from ..state.memory_checkpoint import read_checkpoint

    cp = read_checkpoint(args.file)
    if args.json:
        print_json({"kind": "memory_manager_state", "file": args.file, "policyName": cp.policy_name,
                    "machineState": machine_state_to_dict(cp.state.machine_state),
                    "entries": assignments_to_dict(cp.state.assignments) or {},
                    "checksum": cp.checksum, "checksum_status": "valid" if cp.checksum else "not set"})
        return 0
    print(f"file:     {args.file} (memory_manager_state)")
    print(f"policy:   {cp.policy_name}")
    print(f"checksum: {cp.checksum} ({'valid' if cp.checksum else 'not set'})")
    if cp.state.machine_state:
        _print_table(_rows(cp.state))
    else:
        print("machine state: (empty)")
    entries = [(uid, c, b) for uid, cs in sorted((cp.state.assignments or {}).items())
               for c, bs in sorted(cs.items()) for b in bs]
    if not entries:
        print("entries:  (none)")
        return 0
    print()
    _print_table([("POD", "CONTAINER", "TYPE", "NUMA", "SIZE")] +
                 [(uid, c, b.type, ",".join(map(str, b.numa_affinity or [])), _size(b.size)) for uid, c, b in entries])
    return 0


def _reserved_from_file(state):
    # Without --reserved-memory, assume the reservation the file itself records.
    return {nid: {res: t.system_reserved for res, t in (node.memory_map or {}).items() if t.system_reserved}
            for nid, node in (state.machine_state or {}).items()}


def check(args, text, doc) -> int:
    from ..errors import CheckpointError, InputError
    from ..state.machine import machine_for
    from ..policy.memorymanager.reserved import parse_reserved_memory, system_reserved_memory
    from ..policy.memorymanager.state import MemoryState, machine_state_differences
    from ..policy.memorymanager.static_policy import StaticPolicy
    from ..state.memory_checkpoint import read_checkpoint, render_checkpoint, write_checkpoint

    if args.dry_run and not args.fix:
        raise InputError("--dry-run only makes sense with --fix")
    cp = read_checkpoint(args.file)  # a corrupt file stops here and is never rewritten
    policy_name = _POLICY_NAMES.get((args.policy or "").lower(), args.policy) if args.policy else cp.policy_name
    findings, unfixable = [], []
    kubelet_error = None
    if policy_name != cp.policy_name:
        kubelet_error = f'[memorymanager] configured policy "{policy_name}" differs from state checkpoint policy ' \
                        f'"{cp.policy_name}"'
        findings.append(f"the file was written by policy {cp.policy_name!r}, the kubelet is configured with "
                        f"{policy_name!r}")
    fixed = None
    if policy_name == "Static":
        machine = machine_for(getattr(args, "topology", None), getattr(args, "root", "/"))
        node_ids = [n.id for n in machine]
        spec = getattr(args, "reserved_memory", None)
        reserved = (system_reserved_memory(node_ids, None, parse_reserved_memory(spec)) if spec
                    else _reserved_from_file(cp.state))
        policy = StaticPolicy(machine, reserved)
        try:
            policy.start(cp.state)
        except CheckpointError as err:
            kubelet_error = kubelet_error or str(err)
            findings.extend(getattr(err, "details", None) or [str(err)])
        try:
            expected = policy.replay(cp.state.assignments)
            fixed = MemoryState(expected, cp.state.assignments)
            if not cp.state.machine_state and not cp.state.assignments:
                fixed = None  # an empty file is what a fresh kubelet starts from
        except CheckpointError as err:
            unfixable.append(f"{err} (drain the node and delete the file)")
    elif policy_name == "None" and cp.state.assignments:
        findings.append("policy None keeps no assignments, but the file has some")
    ok = kubelet_error is None and not findings
    changes = [] if fixed is None else machine_state_differences(cp.state.machine_state, fixed.machine_state)
    wrote = False
    new_text = None
    if args.fix and not ok and fixed is not None and not unfixable:
        new_text = render_checkpoint(policy_name, fixed)
        if not args.dry_run:
            write_checkpoint(args.file, policy_name, fixed)
            wrote = True
    if args.json:
        print_json({"file": args.file, "ok": ok, "kubelet_error": kubelet_error, "findings": findings,
                    "unfixable": unfixable, "changes": changes if args.fix else [], "written": wrote})
    elif ok:
        print(f"{args.file}: OK (policy {policy_name})")
    else:
        from ._state_report import print_problems

        print_problems(args.file, kubelet_error, findings, unfixable,
                       "changes (machine state rebuilt from the assignments):", changes, new_text, args.dry_run)
    return 0 if ok or wrote else 1
