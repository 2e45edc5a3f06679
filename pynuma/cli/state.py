"""``pynuma state``: show, check and fix kubelet CPU (and memory) manager checkpoint files.

    pynuma state show /var/lib/kubelet/cpu_manager_state [--json]
    pynuma state check STATE_DIR [--fix [--dry-run]] [--json]    # files vs each other and the ledger
    pynuma state check /var/lib/kubelet/cpu_manager_state [--topology FILE | --root DIR]
                       [--policy static] [--reserved-cpus 0,1 | --num-reserved N]
                       [--option strict-cpu-reservation] [--fix [--dry-run]] [--json]

``check`` explains everything that no longer matches the machine or the
policy (the kubelet only refuses to start); exit 0 when the file fits, 1
when it does not.  ``--fix`` writes a corrected file atomically (``--dry-run``
prints the change and writes nothing).  A file with a bad checksum is never
rewritten.

The file kind is recognised from its content (``defaultCpuSet`` = CPU
manager); each kind registers its ``show``/``check`` in :data:`HANDLERS`.
"""
from __future__ import annotations

import os

from ._streams import stdout
from ..errors import InputError
from ._common import add_json, add_root, parser, print_json


def _build_parser():
    p = parser("state", "Show, check and fix kubelet CPU / memory manager checkpoint files.")
    sub = p.add_subparsers(dest="action", metavar="{show,check}")
    sub.required = True
    show = sub.add_parser("show", help="print a checkpoint file (verifies its checksum)")
    show.add_argument("file", metavar="FILE")
    add_json(show)
    check = sub.add_parser("check", help="explain what no longer matches the machine or policy; "
                                         "DIR: do its files agree with each other and the ledger")
    check.add_argument("file", metavar="FILE|DIR")
    src = check.add_mutually_exclusive_group()
    src.add_argument("--topology", metavar="FILE", help="machine topology JSON instead of discovery")
    add_root(src)
    check.add_argument("--policy", metavar="NAME", help="configured policy (default: the one in the file)")
    res = check.add_mutually_exclusive_group()
    res.add_argument("--reserved-cpus", metavar="LIST", help="the kubelet's --reserved-cpus")
    res.add_argument("--num-reserved", metavar="N", type=int, default=0,
                     help="number of reserved CPUs (picked as the kubelet picks them)")
    check.add_argument("--option", action="append", default=[], metavar="NAME[=VALUE]",
                       help="CPU Manager policy option (repeatable), e.g. strict-cpu-reservation")
    check.add_argument("--reserved-memory", metavar="SPEC",
                       help="memory_manager_state: the kubelet's --reserved-memory, e.g. '0:memory=1Gi;1:memory=1Gi'")
    check.add_argument("--fix", action="store_true", help="write a corrected file (atomically)")
    check.add_argument("--dry-run", action="store_true", help="with --fix: print the change, write nothing")
    add_json(check)
    return p


def _read_json(path):
    from ..inputfile import read_capped

    try:
        text = read_capped(path).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as err:
        raise InputError(f"{path}: {err.strerror or err}") from None
    from .._jsonsubset import loads  # json.loads, without importing json for a checkpoint as the kubelet writes it

    try:
        return text, loads(text)
    except (ValueError, RecursionError):
        return text, None  # the kind's own reader reports the decoding error


def detect_kind(path: str, doc) -> str:
    """``"cpu"`` or ``"memory"`` from the file's content, falling back to its name."""
    if isinstance(doc, dict):
        keys = {str(k).lower() for k in doc}
        if "defaultcpuset" in keys:
            return "cpu"
        if "machinestate" in keys:
            return "memory"
    base = os.path.basename(path)
    if "memory_manager" in base:
        return "memory"
    if "cpu_manager" in base:
        return "cpu"
    raise InputError(f"{path}: neither a cpu_manager_state nor a memory_manager_state file")


# -- cpu_manager_state ----------------------------------------------------------
def _cpu_show(args, text, doc) -> int:
    from ..errors import CheckpointError
    from ..state import cpu_checkpoint as ckpt

    try:
        cp = ckpt.decode(text)  # verifies the checksum; v1 entries stay keyed by container ID
    except CheckpointError as err:
        raise CheckpointError(f"{args.file}: could not restore state from checkpoint: {err}") from None
    if cp.format == "v1":
        entries = {"(container ID)": dict(cp.entries)} if cp.entries else {}
    else:
        entries = cp.entries
    rows = [(p, c, s) for p in sorted(entries) for c, s in sorted(entries[p].items())]
    status = "valid" if cp.checksum else "not set"
    if args.json:
        print_json({"kind": "cpu_manager_state", "file": args.file, "format": cp.format,
                    "policyName": cp.policy_name, "defaultCpuSet": cp.default_cpuset,
                    "entries": cp.entries, "checksum": cp.checksum, "checksum_status": status})
        return 0
    print(f"file:           {args.file} (cpu_manager_state, {cp.format})")
    print(f"policy:         {cp.policy_name}")
    print(f"default cpuset: {cp.default_cpuset or '(empty)'}{_size(cp.default_cpuset)}")
    print(f"checksum:       {cp.checksum} ({status})")
    if not rows:
        print("entries:        (none)")
        return 0
    w_pod = max(len("POD"), *(len(p) for p, _, _ in rows))
    w_con = max(len("CONTAINER"), *(len(c) for _, c, _ in rows))
    print(f"{'POD':<{w_pod}}  {'CONTAINER':<{w_con}}  CPUS")
    for p, c, s in rows:
        print(f"{p:<{w_pod}}  {c:<{w_con}}  {s}{_size(s)}")
    return 0


def _size(text: str) -> str:
    from ..cpuset import CPUSet

    try:
        return f" ({len(CPUSet.parse(text))} CPUs)"
    except ValueError:
        return " (not a valid cpulist)"


def _cpu_policy(args, topo):
    from ..policy.cpumanager.options import ALL_GATES_ON, parse_options
    from ..policy.cpumanager.static_policy import new_policy

    values = {}
    for item in args.option:
        name, eq, value = item.partition("=")
        values[name.strip()] = value.strip() if eq else "true"
    opts = parse_options(values, ALL_GATES_ON)
    reserved = None
    num = args.num_reserved
    if args.reserved_cpus:
        from ..config.kubelet import parse_reserved_cpus

        reserved = parse_reserved_cpus(args.reserved_cpus, "--reserved-cpus")
        num = len(reserved)
    return opts, (lambda name: new_policy(name, topo, num_reserved=num, reserved=reserved, options=opts))


def _describe(state) -> dict:
    return {"defaultCpuSet": str(state.default),
            "entries": {p: {c: str(s) for c, s in sorted(cs.items())} for p, cs in sorted(state.assignments.items())}}


def _changes(old_policy, old, new_policy, new):
    out = []
    if old_policy != new_policy:
        out.append(f'policyName: "{old_policy}" -> "{new_policy}"')
    if old.default != new.default:
        out.append(f'defaultCpuSet: "{old.default}" -> "{new.default}"')
    keys = sorted({(p, c) for p, cs in old.assignments.items() for c in cs} |
                  {(p, c) for p, cs in new.assignments.items() for c in cs})
    for p, c in keys:
        a, b = old.get(p, c), new.get(p, c)
        if a == b:
            continue
        if b is None:
            out.append(f'entries[{p}][{c}]: "{a}" -> removed')
        elif a is None:
            out.append(f'entries[{p}][{c}]: added "{b}"')
        else:
            out.append(f'entries[{p}][{c}]: "{a}" -> "{b}"')
    return out


def _cpu_check(args, text, doc) -> int:
    from ..errors import CheckpointError
    from ..policy.cpumanager.static_policy import CPUState
    from ..state import cpu_checkpoint as ckpt
    from ..state.cpu_check import check_cpu_state
    from ..topology_file import cpu_topology_for

    if args.dry_run and not args.fix:
        raise InputError("--dry-run only makes sense with --fix")
    st = ckpt.read_file(args.file)  # corrupt file: CheckpointError, never rewritten
    topo = cpu_topology_for(args.topology, args.root)
    _, make = _cpu_policy(args, topo)
    policy = make(args.policy or st.policy_name or "none")
    if st.checkpoint.format == "v1" and st.checkpoint.entries:
        raise CheckpointError(f"{args.file}: legacy v1 entries are keyed by container ID; the kubelet "
                              f"migrates them with its container runtime, which pynuma cannot ask")
    state = CPUState(st.default, st.assignments)
    report = check_cpu_state(st.policy_name, state, policy)
    wrote = False
    new_text = None
    if args.fix and report.fixed is not None and not report.ok:
        new_text = ckpt.dumps(report.fixed_policy, report.fixed.default, report.fixed.assignments)
        if not args.dry_run:
            ckpt.write_file(args.file, report.fixed_policy, report.fixed.default, report.fixed.assignments)
            wrote = True
    changes = [] if report.fixed is None else _changes(st.policy_name, state, report.fixed_policy, report.fixed)
    if args.json:
        out = {"file": args.file, "ok": report.ok, "kubelet_error": report.kubelet_error,
               "findings": [f.to_json() for f in report.findings], "unfixable": report.unfixable,
               "fixed": None if report.fixed is None else dict(policyName=report.fixed_policy,
                                                                **_describe(report.fixed)),
               "changes": changes, "written": wrote}
        print_json(out)
    else:
        if report.ok:
            print(f"{args.file}: OK (policy {policy.name}, {len(topo.cpus())} CPUs {topo.cpus()})")
        else:
            from ._state_report import print_problems

            print_problems(args.file, report.kubelet_error, [f.message for f in report.findings], report.unfixable,
                           "changes:" if changes else "changes: (checksum / format only)", changes, new_text,
                           args.dry_run)
    if args.fix and report.fixed is None and not report.ok:
        return 1
    if report.ok or wrote:
        return 0
    return 1


# kind -> (show, check); each is ``fn(args, text, parsed_json_or_None) -> exit status``.
# memory_manager_state: helper E registers its handlers here.
HANDLERS = {"cpu": (_cpu_show, _cpu_check)}


def _memory(action):
    def run(args, text, doc):
        from . import _state_memory

        return getattr(_state_memory, action)(args, text, doc)
    return run


HANDLERS["memory"] = (_memory("show"), _memory("check"))


def main(argv) -> int:
    args = _build_parser().parse_args(argv)
    if os.path.isdir(args.file):
        if args.action != "check":
            raise InputError(f"{args.file}: is a directory; 'state check DIR' checks a state directory")
        from ._state_dir import check_dir

        return check_dir(args)
    text, doc = _read_json(args.file)
    kind = detect_kind(args.file, doc)
    handlers = HANDLERS.get(kind)
    if handlers is None:
        raise InputError(f"{args.file}: {kind} manager state files are not supported by this build")
    show, check = handlers
    rc = (show if args.action == "show" else check)(args, text, doc)
    stdout().flush()
    return rc
