"""``pynuma apply POD.yaml``: create or update a pod's cgroups as the kubelet would set them.

    pynuma apply pod.yaml [--state-dir DIR] [--cgroup-root PATH] [--dry-run]
                          [--pid CONTAINER=PID ...] [--container-id CONTAINER=ID ...] [--remove]

CPU and memory-node placements come from the CPU and Memory Manager
checkpoints in ``--state-dir``.  ``--dry-run`` prints the exact writes.
"""
from __future__ import annotations

from typing import Dict, List

from ..parse import ascii_uint, parse_pid, shown


def _pairs(items, what: str, convert=str) -> Dict[str, object]:
    from ..errors import InputError

    out: Dict[str, object] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise InputError(f"{what} {item!r}: expected CONTAINER=VALUE")
        try:
            converted = convert(value)
        except ValueError:
            raise InputError(f"{what} {shown(item)}: {shown(value)} is not valid") from None
        if convert is parse_pid:  # several processes per container
            out.setdefault(name, []).append(converted)  # type: ignore[union-attr]
        else:
            out[name] = converted
    return out


def _period_us(text: str) -> int:
    from ..errors import InputError

    for unit, scale in (("us", 1), ("µs", 1), ("ms", 1000), ("s", 1000000)):
        digits = ascii_uint(text[: -len(unit)], 12) if text.endswith(unit) else None
        if digits is not None:
            value = digits * scale
            break
    else:
        raise InputError(f"--cpu-cfs-quota-period {shown(text)}: expected a duration from 1ms to 1s, such as 100ms")
    if not 1000 <= value <= 1000000:
        raise InputError(f"--cpu-cfs-quota-period {text}: must be between 1ms and 1s")
    return value


def _capacity(fs) -> int:
    from ..meminfo import MEMINFO, mem_total
    from ..errors import PynumaError

    total = mem_total(fs)
    if total is None:
        raise PynumaError(f"{fs.host_path(MEMINFO)}: no MemTotal to compute OOM scores from")
    return total


def main(argv: List[str]) -> int:
    from ._actuate import add_target, open_target, print_plan
    from ._common import add_json, parser, print_json

    p = parser("apply", "Create or update a pod's cgroups (pod and containers) with the kubelet's settings.")
    p.add_argument("pods", metavar="POD.yaml", help="pod manifest(s): YAML or JSON, one pod, several, or a List")
    p.add_argument("--state-dir", metavar="DIR",
                   help="kubelet state directory with cpu_manager_state / memory_manager_state (CPU and "
                        "memory-node placements); default: no placements")
    add_target(p)
    p.add_argument("--dry-run", action="store_true", help="print the exact writes, change nothing")
    p.add_argument("--remove", action="store_true", help="remove the pods' cgroups instead (they must be empty)")
    p.add_argument("--pid", action="append", metavar="CONTAINER=PID",
                   help="move a process into a container's cgroup and give it the container's oom_score_adj")
    p.add_argument("--container-id", action="append", metavar="CONTAINER=ID",
                   help="runtime id naming a container's cgroup (default: the container name)")
    p.add_argument("--no-cpu-cfs-quota", action="store_true", help="do not enforce CPU limits (--cpu-cfs-quota=false)")
    p.add_argument("--cpu-cfs-quota-period", default="100ms", metavar="DURATION", help="CFS period (default 100ms)")
    p.add_argument("--pod-max-pids", type=int, metavar="N", help="pids.max of each pod cgroup")
    p.add_argument("--memory-qos", action="store_true", help="MemoryQoS: memory.min/low on cgroup v2")
    p.add_argument("--memory-reservation-policy", choices=("None", "TieredReservation"), default="None",
                   help="how MemoryQoS protects requests (default None)")
    add_json(p)
    args = p.parse_args(argv)

    from ..apply import KubeletSettings, execute, placements_from_state, plan_pod, plan_remove_pod
    from ..errors import InputError
    from ..fsroot import FsRoot
    from ..pod import load_pods

    pods = load_pods(args.pods, defaulted=True)  # as the kubelet sees them
    pids = _pairs(args.pid, "--pid", parse_pid)
    ids = _pairs(args.container_id, "--container-id")
    from ..limits import INT64_MAX

    if args.pod_max_pids is not None and not -1 <= args.pod_max_pids <= INT64_MAX:  # podPidsLimit: an int64
        raise InputError(f"--pod-max-pids {args.pod_max_pids}: must be -1 (no limit) or more, at most {INT64_MAX}")
    if args.state_dir:
        from ._ledger import existing_state_dir

        existing_state_dir(args.state_dir)  # a mistyped one must not mean "no placements"
    if len(pods) > 1 and (pids or ids):
        raise InputError(f"{args.pods}: --pid and --container-id need a file with one pod, it has {len(pods)}")
    settings = KubeletSettings(enforce_cpu_limits=not args.no_cpu_cfs_quota,
                               cpu_period_us=_period_us(args.cpu_cfs_quota_period), memory_qos=args.memory_qos,
                               memory_reservation_policy=args.memory_reservation_policy,
                               pod_pids_limit=args.pod_max_pids)
    out = []
    with FsRoot(args.root) as fs:
        tree = open_target(fs, args, args.dry_run)
        for pod in pods:
            if args.remove:
                plan = plan_remove_pod(tree, pod.uid)
            else:
                plan = plan_pod(tree, pod, settings=settings, placements=placements_from_state(args.state_dir, pod),
                                container_ids=ids, pids=pids, memory_capacity=_capacity(fs) if pids else None)
            if not args.dry_run:
                execute(tree, plan)
            out.append((pod, plan))
    if args.json:
        print_json({"dry_run": args.dry_run, "cgroup_version": tree.version, "driver": tree.driver,
                    "pods": [{"pod": pod.name, "namespace": pod.namespace, "uid": pod.uid, **plan.to_dict()}
                             for pod, plan in out]})
        return 0
    for pod, plan in out:
        if len(out) > 1:
            print(f"# pod {pod.namespace}/{pod.name} ({pod.uid})")
        print_plan(plan, args.dry_run)
    return 0
