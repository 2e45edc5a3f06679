"""Topology Manager merge cost: native core vs pure twin vs the kubelet's exhaustive fold.

    python3 bench/bench_merge.py            # 2, 4, 8, 16 nodes (+ 32, 64 bounded)
    python3 bench/bench_merge.py --quick    # fewer repeats

Three providers (CPU, memory, device) give hints the way the kubelet's
managers do: every NUMA set whose free amount (sum of per-node free counts)
covers the request, preferred when the set is as small as the request could
need on an empty machine.  On 32 and 64 nodes only sets up to the minimal
size + 1 are listed (nobody can list 2**64 sets).  Two scenarios:

* aligned  — one node can hold everything: a preferred merged hint exists;
* conflict — the device sits where the CPUs do not fit: no preferred hint,
  so the best non-preferred AND must be found (the expensive case);
* wide (32 nodes) — the conflict with sets up to the minimal size + 3
  (tens of thousands of hints per provider): too many for an exact search
  on 32 nodes, answered by the bounded beam and flagged as such.

Times are CPU time of this process (best of several runs), so a busy
machine does not inflate them.  The exhaustive fold is run when its cross product has at most 300k
permutations, else estimated from a timed sample (marked ``~``).  Decisions
of native, pure and exhaustive are checked equal wherever the fold ran.
"""
from __future__ import annotations

import itertools
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pynuma import _impl  # noqa: E402
from pynuma.policy.topologymanager.bitmask import NUMAMask  # noqa: E402
from pynuma.policy.topologymanager.hints import TopologyHint  # noqa: E402
from pynuma.policy.topologymanager.numa_info import NUMAInfo  # noqa: E402
from pynuma.policy.topologymanager.merge import (MERGE_BUDGET, HintMerger, iterate_permutations,  # noqa: E402
                                          merge_permutation)

EXHAUSTIVE_MAX = 300_000
TARGET_MS = {8: 1.0, 16: 50.0}


def provider_hints(n, free, total, need, max_extra=None):
    """Hints from per-node free counts (subset sums, no per-CPU scans)."""
    order = sorted(total, reverse=True)
    min_size = next((k for k in range(1, n + 1) if sum(order[:k]) >= need), n)
    sizes = range(1, n + 1) if max_extra is None else range(1, min(n, min_size + max_extra) + 1)
    out = []
    if max_extra is None:
        sums = [0] * (1 << n)
        for m in range(1, 1 << n):
            low = m & -m
            sums[m] = sums[m ^ low] + free[low.bit_length() - 1]
        for size in sizes:
            for combo in itertools.combinations(range(n), size):
                m = sum(1 << i for i in combo)
                if sums[m] >= need:
                    out.append(TopologyHint(NUMAMask.from_bits(m), size == min_size))
    else:
        for size in sizes:
            for combo in itertools.combinations(range(n), size):
                if sum(free[i] for i in combo) >= need:
                    out.append(TopologyHint(NUMAMask(combo), size == min_size))
    return out


def scenario(n, kind, max_extra=None):
    cpus = [32] * n
    free_cpu = [(7 * i) % 23 + 10 for i in range(n)]
    mem = [64] * n
    free_mem = [(5 * i) % 50 + 10 for i in range(n)]
    dev_nodes = [i for i in range(n) if i % 4 == 3] or [n - 1]
    devs = [2 if i in dev_nodes else 0 for i in range(n)]
    free_dev = list(devs)
    if max_extra is None:
        max_extra = None if n <= 16 else 1
    if kind == "aligned":
        free_cpu[dev_nodes[0]] = 32
        free_mem[dev_nodes[0]] = 64
        need_cpu, need_mem, need_dev = 16, 40, 1
    else:
        free_cpu = [2 if devs[i] else c for i, c in enumerate(free_cpu)]  # no room for CPUs by the devices
        need_cpu, need_mem, need_dev = 24, 40, 1
    return [provider_hints(n, free_cpu, cpus, need_cpu, max_extra),
            provider_hints(n, free_mem, mem, need_mem, max_extra),
            provider_hints(n, free_dev, devs, need_dev, max_extra)]


def timed(fn, repeat):
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.process_time()
        result = fn()
        times.append(time.process_time() - t0)
    return min(times) * 1e3, result  # CPU time, best of the runs: the machine may be shared


def exhaustive(merger, lists, budget_s=2.0):
    size = 1
    for lst in lists:
        size *= len(lst)
    if size <= EXHAUSTIVE_MAX:
        ms, hint = timed(merger.merge_exhaustive, 1)
        return ms, hint, False
    default = merger.info.default_mask()
    done, t0 = 0, time.process_time()
    for perm in iterate_permutations(lists):
        merge_permutation(default, perm)
        done += 1
        if done % 1000 == 0 and time.process_time() - t0 > budget_s / 4:
            break
    per = (time.process_time() - t0) / done
    return per * size * 1e3, None, True


def fmt_ms(ms, est=False):
    if ms >= 86_400_000:
        return f"~{ms / 86_400_000:.3g} d" if est else f"{ms / 86_400_000:.3g} d"
    if ms >= 1000:
        return f"{'~' if est else ''}{ms / 1000:.3g} s"
    return f"{'~' if est else ''}{ms:.3g} ms"


def main(argv):
    quick = "--quick" in argv
    impls = _impl.implementations("merge")
    sizes = [2, 4, 8, 16, 32, 64]
    print(f"{'nodes':>5} {'scenario':>9} {'hints':>17} {'native core':>12} {'native e2e':>11} "
          f"{'pure':>10} {'exhaustive':>12} {'pure/nat':>9} {'exh/nat':>10}  result")
    for n in sizes:
        info = NUMAInfo.from_matrix(range(n), [[10 if i == j else 20 + abs(i - j) for j in range(n)]
                                               for i in range(n)])
        kinds = [("aligned", None), ("conflict", None)] + ([("wide", 3)] if n == 32 else [])
        for kind, extra in kinds:
            lists = scenario(n, "conflict" if kind == "wide" else kind, extra)
            merger = HintMerger(info, lists, "best-effort")
            repeat = 3 if quick else (5 if n >= 16 else 20)
            enc = [([h.numa_affinity.bits for h in lst], bytes(1 if h.preferred else 0 for h in lst))
                   for lst in lists]
            row = {}
            if "native" in impls:
                core = impls["native"]
                row["core"], _ = timed(lambda: core.merge(info.default_mask().bits, enc, False, None, MERGE_BUDGET),
                                       repeat)
                row["e2e"], (hint_n, exact) = timed(lambda: merger.merge_ex(core), repeat)
            pure_repeat = 1 if n >= 16 else repeat
            row["pure"], (hint_p, exact_p) = timed(lambda: merger.merge_ex(impls["pure"]), pure_repeat)
            if n <= 16:
                row["exh"], hint_e, est = exhaustive(merger, lists)
            else:
                row["exh"], hint_e, est = None, None, True
            hint = hint_n if "native" in impls else hint_p
            if "native" in impls:
                assert hint_n == hint_p and exact == exact_p, (n, kind, hint_n, hint_p)
            if hint_e is not None:
                assert hint_e == hint, (n, kind, hint_e, hint)
            nat = row.get("core")
            counts = "x".join(str(len(lst)) for lst in lists)
            exh_s = "-" if row["exh"] is None else fmt_ms(row["exh"], est)
            print(f"{n:>5} {kind:>9} {counts:>17} {fmt_ms(nat) if nat else '-':>12} "
                  f"{fmt_ms(row['e2e']) if nat else '-':>11} {fmt_ms(row['pure']):>10} {exh_s:>12} "
                  f"{(row['pure'] / nat) if nat else 0:>8.0f}x "
                  f"{(row['exh'] / nat) if nat and row['exh'] else 0:>9.3g}x  {hint}"
                  f"{'' if exact else ' (bounded search)'}")
            target = TARGET_MS.get(n)
            if target and nat:
                print(f"{'':>5} {'':>9} target <= {target} ms: core {nat / target:.2f} of target, "
                      f"end to end {row['e2e'] / target:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
