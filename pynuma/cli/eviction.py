"""``pynuma eviction``: what the kubelet's eviction manager observes and decides on this node.

Signals vs thresholds, node conditions, the threshold acted on, node-level
reclaim, ranked eviction candidates and the pod that would be evicted (with
the status message the kubelet would write).  ``--explain`` shows how
``memory.available`` is computed beside ``/proc/meminfo``'s MemAvailable.
"""
from __future__ import annotations

import time

from . import _common
from ._streams import stdout


def _parser():
    p = _common.parser("eviction", __doc__.splitlines()[0].split(": ", 1)[1])
    p.add_argument("--eviction-hard", metavar="SIG<Q,...", help="hard thresholds (kubelet flag syntax); "
                   "default: memory.available<100Mi,nodefs.available<10%%,nodefs.inodesFree<5%%,"
                   "imagefs.available<15%%,imagefs.inodesFree<5%%")
    p.add_argument("--eviction-soft", metavar="SIG<Q,...", help="soft thresholds")
    p.add_argument("--eviction-soft-grace-period", metavar="SIG=DURATION,...")
    p.add_argument("--eviction-minimum-reclaim", metavar="SIG=Q,...")
    p.add_argument("--eviction-pressure-transition-period", metavar="DURATION", help="default 5m")
    p.add_argument("--eviction-max-pod-grace-period", metavar="SECONDS", type=int)
    p.add_argument("--enforce-node-allocatable", metavar="LIST", help="default: pods")
    p.add_argument("--kubelet-config", metavar="FILE", help="KubeletConfiguration YAML (flags override it)")
    src = p.add_argument_group("pods")
    src.add_argument("--pods", metavar="FILE", help="pods (YAML/JSON manifests or compact form with 'usage')")
    src.add_argument("--from-cgroups", action="store_true", help="pod usage from the kubelet's pod cgroups")
    src.add_argument("--stats", metavar="FILE", help="a kubelet /stats/summary JSON instead of reading the host")
    p.add_argument("--fs-stats", metavar="FILE", help="nodefs/imagefs figures from a kubelet /stats/summary "
                   "(node.fs, node.runtime.imageFs) instead of statvfs; what a --root dump needs for them")
    p.add_argument("--kubelet-root", metavar="DIR", default="/var/lib/kubelet", help="nodefs directory")
    p.add_argument("--image-dir", metavar="DIR", help="imagefs directory (default: the runtime's, if found)")
    p.add_argument("--containerfs-dir", metavar="DIR", help="writable-layer directory (default: imagefs)")
    p.add_argument("--watch", metavar="SECONDS", type=float, help="repeat every SECONDS, keeping manager state")
    p.add_argument("--count", metavar="N", type=int, help="with --watch: stop after N passes")
    p.add_argument("--explain", action="store_true", help="how memory.available is computed here")
    _common.add_root(p)
    _common.add_json(p)
    return p


def _config(args):
    from ..errors import InputError
    from ..config.kubelet import KubeletConfig, load_kubelet_config
    from ..policy.eviction.manager import EvictionConfig, FsLayout
    from ..policy.eviction.thresholds import (
        SETTING_FLAGS, ThresholdError, parse_duration, parse_flags, parse_threshold_config,
    )

    kc = load_kubelet_config(args.kubelet_config) if args.kubelet_config else KubeletConfig()

    def flag(name, sep, current):
        value = getattr(args, name.replace("-", "_"))
        if value is None:
            return current
        try:
            return parse_flags(value, sep)
        except InputError as err:
            raise InputError(f"--{name}: {err}") from None

    hard = flag("eviction-hard", "<", kc.eviction_hard)
    soft = flag("eviction-soft", "<", kc.eviction_soft)
    grace = flag("eviction-soft-grace-period", "=", kc.eviction_soft_grace_period)
    reclaim = flag("eviction-minimum-reclaim", "=", kc.eviction_minimum_reclaim)
    enforce = ([v for v in args.enforce_node_allocatable.split(",") if v] if args.enforce_node_allocatable is not None
               else kc.enforce_node_allocatable)
    if args.enforce_node_allocatable is not None:
        from ..config.kubelet import check_enforce_node_allocatable

        check_enforce_node_allocatable(enforce, "--enforce-node-allocatable")
    try:
        thresholds = parse_threshold_config(enforce, hard, soft, grace, reclaim)
    except ThresholdError as err:
        from_flag = getattr(args, SETTING_FLAGS[err.setting][2:].replace("-", "_")) is not None
        raise InputError(err.describe(None if from_flag or not args.kubelet_config else args.kubelet_config)) from None
    if args.eviction_pressure_transition_period is not None:
        try:
            period = parse_duration(args.eviction_pressure_transition_period)
        except InputError as err:
            raise InputError(f"--eviction-pressure-transition-period: not a duration (e.g. 30s, 5m, 1h): {err}") from None
    else:
        period = kc.eviction_pressure_transition_period_s
    max_grace = (args.eviction_max_pod_grace_period if args.eviction_max_pod_grace_period is not None
                 else kc.eviction_max_pod_grace_period_s)
    from ..limits import INT32_MAX

    if not -INT32_MAX - 1 <= max_grace <= INT32_MAX:  # the kubelet's flag is an int32
        raise InputError(f"--eviction-max-pod-grace-period {max_grace}: must fit an int32")
    return EvictionConfig(tuple(thresholds), max_grace, period, kc.local_storage_capacity_isolation, FsLayout(),
                          kc.feature_gates.get("KubeletSeparateDiskGC", True))


def _raw_items(path):
    """The pod documents of a file in load order (JSON, or YAML documents, ``kind: List`` flattened)."""
    from ..inputfile import load_items

    return load_items(path)


def _load_pod_file(path):
    """Pods, their compact ``usage`` stats and terminationGracePeriodSeconds (both by uid)."""
    from ..pod import load_pods
    from ..policy.eviction.ranking import PodStats

    pods = load_pods(path, defaulted=True)  # validated and defaulted as the kubelet sees them
    stats, grace = {}, {}
    for pod, item in zip(pods, _raw_items(path)):
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("usage"), dict):
            stats[pod.uid] = PodStats.from_usage(pod, item["usage"])
        spec = item.get("spec") if isinstance(item.get("spec"), dict) else item
        tg = spec.get("terminationGracePeriodSeconds")
        if isinstance(tg, int) and not isinstance(tg, bool):
            grace[pod.uid] = tg
    return pods, stats, grace


def _gather(args, fs, config):
    """(NodeStats, pods, layout, HostReading or None) for one pass."""
    from ..errors import InputError
    from ..policy.eviction.manager import FsLayout, NodeStats
    from ..policy.eviction.observations import make_signal_observations, pod_stats_from_summary, summary_shape_problem

    pods, stats, grace = _load_pod_file(args.pods) if args.pods else ([], {}, {})
    pods = list(pods)
    reading = None
    if args.stats:
        from ..inputfile import load_json
        from ..pod import Pod

        summary = load_json(args.stats)
        if not isinstance(summary, dict):
            raise InputError(f"{args.stats}: expected a stats summary object")
        problem = summary_shape_problem(summary)
        if problem is not None:
            raise InputError(f"{args.stats}: {problem}")
        observations = make_signal_observations(summary)
        known = {p.uid for p in pods}
        for uid, s in pod_stats_from_summary(summary).items():
            stats.setdefault(uid, s)
        for entry in summary.get("pods") or []:
            ref = entry.get("podRef") if isinstance(entry, dict) else None
            if isinstance(ref, dict) and ref.get("uid") and ref["uid"] not in known:
                # Summary-only pods: no spec, so no requests or priority (rank by usage alone).
                known.add(ref["uid"])
                pods.append(Pod(name=str(ref.get("name") or ref["uid"]),
                                namespace=str(ref.get("namespace") or "default"), uid=str(ref["uid"])))
        layout = FsLayout()
    else:
        from ..pressure.host import read_host

        reading = read_host(fs, args.kubelet_root, args.image_dir, args.containerfs_dir, walk=args.from_cgroups,
                            fs_given=args.fs_given)
        observations = reading.observations
        layout = FsLayout(reading.dedicated_image_fs, bool(args.containerfs_dir))
        if args.from_cgroups:
            from ..policy.eviction.podstats import stats_from_cgroups

            pods, cg_stats = stats_from_cgroups(reading.pods, pods)
            stats = {**stats, **cg_stats}
    return NodeStats(observations, stats), pods, layout, reading, grace


def _human(n, signal):
    from ..policy.eviction.observations import quantity_format

    if n is None:
        return "-"
    if quantity_format(signal) == "DecimalSI":
        return str(n)  # counts (inodes, pids)
    from ._units import human_bytes

    return human_bytes(n)


def _admission(conditions):
    """What the kubelet's admission handler does with new pods under these conditions."""
    if not conditions:
        return "all pods admitted"
    if list(conditions) == ["MemoryPressure"]:
        return ("BestEffort pods rejected unless they tolerate node.kubernetes.io/memory-pressure:NoSchedule; "
                "others admitted")
    from ..policy.eviction.messages import node_condition_message

    return f"non-critical pods rejected (reason Evicted): {node_condition_message(conditions).strip()}"


def _report(config, state, decision, pods, stats, reading, explain):
    from ..policy.eviction.met import threshold_quantity

    rows = []
    for t in state.thresholds or config.thresholds:
        obs = decision.observations.get(t.signal)
        rows.append({
            "signal": t.signal, "threshold": str(t.value), "hard": t.is_hard, "grace_period_s": t.grace_period,
            "threshold_quantity": threshold_quantity(t, obs) if obs else None,
            "available": obs.available if obs else None, "capacity": obs.capacity if obs else None,
            "met": any(t == m for m in decision.met),
        })
    out = {
        "signals": rows,
        "observations": {s: o.to_dict() for s, o in decision.observations.items()},
        "conditions": list(decision.conditions),
        "acting_on": {"signal": decision.signal, "resource": decision.resource} if decision.signal else None,
        "node_reclaim": list(decision.gc_invoked), "reclaimed_by_node_gc": decision.reclaimed_by_gc,
        "admission": _admission(decision.conditions),
        "ranked": list(decision.ranked),
        "evicted": [e.to_dict() for e in decision.evicted],
    }
    if not decision.ranked and pods:
        # Nothing starved: still show who memory pressure would evict first.
        from ..policy.eviction.ranking import rank_memory_pressure, stats_lookup

        out["ranked_if_memory_pressure"] = [p.name for p in rank_memory_pressure(pods, stats_lookup(stats.pods))]
    if reading is not None:
        out["warnings"] = list(reading.warnings)
        if reading.fs_unknown:
            out["filesystems_unknown"] = reading.fs_unknown
        if explain:
            out["explain"] = reading.explain
    if state.warning:
        out.setdefault("warnings", []).append(state.warning)
    return out


def _print_table(out):
    from ._common import printable

    def w(text: str) -> None:
        # pod names and uids come from manifests and cgroup directory names: never raw to the terminal
        stdout().write(printable(text, lines=True))
    w(f"{'SIGNAL':<28} {'AVAILABLE':>12} {'CAPACITY':>12} {'THRESHOLD':>12} {'KIND':<10} MET\n")
    for r in out["signals"]:
        kind = "hard" if r["hard"] else f"soft {r['grace_period_s']:g}s"
        thr = r["threshold"] if r["threshold_quantity"] is None else \
            f"{r['threshold']}" if not r["threshold"].endswith("%") else \
            f"{r['threshold']}={_human(r['threshold_quantity'], r['signal'])}"
        w(f"{r['signal']:<28} {_human(r['available'], r['signal']):>12} {_human(r['capacity'], r['signal']):>12} "
          f"{thr:>12} {kind:<10} {'yes' if r['met'] else ('no' if r['available'] is not None else 'no data')}\n")
    w(f"\nconditions: {', '.join(out['conditions']) or 'none'}\n")
    w(f"admission: {out['admission']}\n")
    if out["acting_on"]:
        w(f"acting on: {out['acting_on']['signal']} (reclaim {out['acting_on']['resource']})\n")
    if out["node_reclaim"]:
        w(f"node-level reclaim first: {', '.join(out['node_reclaim'])}"
          f"{' (enough, no pod evicted)' if out['reclaimed_by_node_gc'] else ''}\n")
    if out["ranked"]:
        w("ranked candidates: " + ", ".join(out["ranked"]) + "\n")
    elif out.get("ranked_if_memory_pressure"):
        w("under memory pressure the order would be: " + ", ".join(out["ranked_if_memory_pressure"]) + "\n")
    for e in out["evicted"]:
        w(f"would evict {e['namespace']}/{e['pod']} (grace {e['grace_period_override_s']}s): {e['message']}\n")
    for msg in out.get("warnings", []):
        w(f"warning: {msg}\n")
    if out.get("filesystems_unknown"):
        w("  (give the dumped machine's figures with --fs-stats FILE, a kubelet /stats/summary)\n")
    ex = out.get("explain")
    if ex:
        w("\nmemory.available explained:\n")
        mi = ex.get("meminfo", {})
        w(f"  /proc/meminfo MemTotal      {_human(mi.get('MemTotal'), 'memory.available')}\n")
        w(f"  /proc/meminfo MemAvailable  {_human(mi.get('MemAvailable'), 'memory.available')}"
          "  (kernel estimate: free + reclaimable cache; NOT what the kubelet uses)\n")
        if ex.get("meminfo_used") is not None:
            w(f"  MemTotal - MemAvailable     {_human(ex['meminfo_used'], 'memory.available')}\n")
        cg = ex.get("cgroup")
        if cg:
            w(f"  cgroup mode                 {cg['mode']}\n")
            w(f"  root usage                  {_human(cg['usage'], 'memory.available')}  ({cg['usage_how']})\n")
            if "anon_plus_file" in cg:
                w(f"  root anon + file            {_human(cg['anon_plus_file'], 'memory.available')}  "
                  f"({cg['anon_plus_file_how']}; the v2 root-usage emulation)\n")
            w(f"  root inactive_file          {_human(cg['inactive_file'], 'memory.available')}\n")
            w(f"  root working set            {_human(cg['working_set'], 'memory.available')}  "
              f"({cg['working_set_how']})\n")
        if "kubelet_memory_available" in ex:
            w(f"  kubelet memory.available    {_human(ex['kubelet_memory_available'], 'memory.available')}  "
              f"({ex['kubelet_how']})\n")
        if "meminfo_available_minus_kubelet" in ex:
            w(f"  MemAvailable - kubelet      {_human(ex['meminfo_available_minus_kubelet'], 'memory.available')}\n")
        if "allocatable" in ex:
            a = ex["allocatable"]
            w(f"  kubepods ({a['path']})  limit {_human(a['limit'], 'memory.available')}, working set "
              f"{_human(a['working_set'], 'memory.available')}\n")


def _stamp(t: float) -> str:
    """Local wall-clock time with its UTC offset, to the millisecond (ISO 8601)."""
    from datetime import datetime

    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="milliseconds")


_MAX_WATCH_S = 86400.0 * 365  # a year between passes is already no watch at all


def main(argv) -> int:
    args = _parser().parse_args(argv)
    from .._dataclass import replace
    from ..errors import InputError
    from ..fsroot import FsRoot
    from ..policy.eviction.manager import EvictionState, synchronize

    # written so nan fails too; the cap keeps time.sleep from overflowing (inf, 1e300)
    if args.watch is not None and not 0 < args.watch <= _MAX_WATCH_S:
        raise InputError(f"--watch: must be a positive number of seconds up to {_MAX_WATCH_S:g}, "
                         f"got {args.watch:g}")
    if args.count is not None and args.count < 1:
        raise InputError(f"--count: must be at least 1, got {args.count}")
    if args.fs_stats and args.stats:
        raise InputError("--fs-stats: not with --stats (the summary already holds the filesystems)")
    config = _config(args)
    args.fs_given = None
    if args.fs_stats:
        from ..pressure.fsstats import load_fs_stats

        args.fs_given = load_fs_stats(args.fs_stats)
    fs = FsRoot(args.root)
    state = EvictionState()
    passes = 0
    try:
        while True:
            stats, pods, layout, reading, grace = _gather(args, fs, config)
            cfg = replace(config, layout=layout)
            now = time.time()
            state, decision = synchronize(cfg, state, stats, pods, now, termination_grace_s=grace)
            out = _report(cfg, state, decision, pods, stats, reading, args.explain)
            if args.watch is not None:
                # each pass says when it was taken: conditions change with time (grace periods, transitions)
                out = {"pass": passes + 1, "time": _stamp(now), **out}
            if args.json:
                _common.print_json(out)
            else:
                if passes:
                    stdout().write("\n")
                if args.watch is not None:
                    stdout().write(f"--- pass {out['pass']} at {out['time']}\n")
                _print_table(out)
            stdout().flush()
            passes += 1
            if args.watch is None or (args.count is not None and passes >= args.count):
                return 0
            time.sleep(args.watch)
    except KeyboardInterrupt:
        from . import owns_process

        if not owns_process():
            raise  # an embedder's interrupt is the embedder's to handle
        return 0  # Ctrl-C ends a watch
