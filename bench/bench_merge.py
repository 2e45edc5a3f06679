"""Topology Manager hint merge: pynuma's public API end to end vs the kubelet's exhaustive fold, compiled.

    python3 bench/bench_merge.py            # 2, 4, 8, 16 nodes (+ 32, 64 with the bounded search)
    python3 bench/bench_merge.py --quick    # fewer rounds, no 32/64

Five providers (CPU, memory, a GPU, 1Gi hugepages, a NIC) hint the way the
kubelet's managers do: every NUMA set whose free amount covers the request,
preferred when the set is as small as the request could need on an empty
machine.  On 32 and 64 nodes only sets up to the minimal size + 1 are listed
(nobody lists 2**64 sets).  Scenarios: *aligned* (one node holds everything:
a preferred merged hint exists) and *conflict* (the devices sit where the
CPUs do not fit: the best non-preferred AND must be found).  A scenario in
which a provider has no hint at all is not run: the kubelet's filter would
turn it into "no placement" before any merge.

Rows, interleaved per round, CPU time of the process (cold first call, min, median):

* ``end to end``  -- ``make_policy("best-effort", info).merge(providers)``:
  filtering, building the merger and the merge (native core);
* ``core``        -- the native merge core alone on already encoded lists;
* ``pure e2e``    -- end to end through the pure-Python core (up to 16 nodes);
* ``C fold``      -- the kubelet's algorithm as a compiled C loop: every
  permutation of one hint per provider, AND, compare (the floor any
  exhaustive implementation would stand on), timed inside the program; run
  in full up to 2e8 permutations, else timed on a sample and extrapolated
  (marked ``~``).  Its answer is checked against pynuma's wherever it ran in full.
"""
from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from _harness import fmt, measure, print_table  # noqa: E402

from pynuma import _impl  # noqa: E402
from pynuma.policy.topologymanager.bitmask import NUMAMask  # noqa: E402
from pynuma.policy.topologymanager.hints import TopologyHint  # noqa: E402
from pynuma.policy.topologymanager.merge import (MERGE_BUDGET, HintMerger, filter_providers_hints,  # noqa: E402
                                                 max_of_min_affinity_counts)
from pynuma.policy.topologymanager.numa_info import NUMAInfo  # noqa: E402
from pynuma.policy.topologymanager.policies import make_policy  # noqa: E402

FULL_FOLD_MAX = 200_000_000
TARGET_MS = {8: 1.0, 16: 50.0}

FOLD_C = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* stdin: default B nlists, then per list: len, then len pairs "mask pref" (mask -1 = nil).
 * argv[1]: permutations to run (0 = all).  Prints: best_mask preferred seconds permutations. */
static int B;
static int pc(uint64_t x) { return __builtin_popcountll(x); }
static int narrower(uint64_t a, uint64_t b) { int x = pc(a), y = pc(b); return x < y || (x == y && a < b); }
/* the kubelet's HintMerger.compare (narrowest): 1 when the candidate replaces the current best */
static int better(int have, uint64_t cm, int cp, uint64_t m, int p) {
    if (m == 0) return 0;
    if (!have) return 1;
    if (!cp && p) return 1;
    if (cp && !p) return 0;
    if (cp && p) return m != cm && narrower(m, cm);
    int c = pc(cm), k = pc(m);
    if (c > B) return m != cm && narrower(m, cm);
    if (c == B) return k == B && m != cm && narrower(m, cm);
    if (k > B) return 0;
    if (k == B) return 1;
    if (k > c) return 1;
    if (k < c) return 0;
    return m != cm && narrower(m, cm);
}
int main(int argc, char **argv) {
    unsigned long long def; int nl;
    if (scanf("%llu %d %d", &def, &B, &nl) != 3) return 2;
    long long *len = calloc(nl, sizeof *len); int64_t **mk = calloc(nl, sizeof *mk); int **pf = calloc(nl, sizeof *pf);
    for (int l = 0; l < nl; l++) {
        scanf("%lld", &len[l]); mk[l] = malloc(len[l] * 8); pf[l] = malloc(len[l] * sizeof(int));
        for (long long i = 0; i < len[l]; i++) { long long m; scanf("%lld %d", &m, &pf[l][i]); mk[l][i] = m; }
    }
    double limit = argc > 1 ? atof(argv[1]) : 0;
    long long *idx = calloc(nl, sizeof *idx);
    uint64_t best = 0; int bp = 0, have = 0; double done = 0;
    struct timespec a, b; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (;;) {
        uint64_t m = def; int p = 1, first_set = 0; int64_t first = 0;
        for (int l = 0; l < nl; l++) {
            int64_t h = mk[l][idx[l]];
            if (h >= 0) {
                m &= (uint64_t)h;
                if (!first_set) { first = h; first_set = 1; } else if (h != first) p = 0;
            }
            if (!pf[l][idx[l]]) p = 0;
        }
        if (better(have, best, bp, m, p)) { best = m; bp = p; have = 1; }
        done++;
        if (limit > 0 && done >= limit) break;
        int l = nl - 1;
        while (l >= 0 && ++idx[l] == len[l]) idx[l--] = 0;
        if (l < 0) break;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    if (!have) { best = def; bp = 0; }
    printf("%llu %d %.9f %.0f\n", (unsigned long long)best, bp,
           (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9, done);
    return 0;
}
"""


def provider_hints(n, free, total, need, max_extra=None):
    """Hints from per-node free counts (subset sums, no per-CPU scans)."""
    order = sorted(total, reverse=True)
    min_size = next((k for k in range(1, n + 1) if sum(order[:k]) >= need), n)
    top = n if max_extra is None else min(n, min_size + max_extra)
    out = []
    for size in range(1, top + 1):
        for combo in itertools.combinations(range(n), size):
            if sum(free[i] for i in combo) >= need:
                out.append(TopologyHint(NUMAMask(combo), size == min_size))
    return out


def scenario(n, kind, max_extra=None):
    """Five providers' answers for one container (a list of {resource: hints})."""
    if max_extra is None and n > 16:
        max_extra = 1
    free_cpu = [(7 * i) % 23 + 10 for i in range(n)]
    free_mem = [(5 * i) % 50 + 10 for i in range(n)]
    gpu_nodes = [i for i in range(n) if i % 4 == 3] or [n - 1]
    gpus = [2 if i in gpu_nodes else 0 for i in range(n)]
    pages = [(3 * i) % 7 + 1 for i in range(n)]
    nics = [1 if i % 5 == 0 else 0 for i in range(n)]
    if kind == "aligned":
        d = gpu_nodes[0]
        free_cpu[d], free_mem[d], pages[d], nics[d] = 32, 64, 8, 1
        need_cpu = 16
    else:
        free_cpu = [2 if gpus[i] else c for i, c in enumerate(free_cpu)]  # no room for CPUs by the GPUs
        need_cpu = 24
    return [{"cpu": provider_hints(n, free_cpu, [32] * n, need_cpu, max_extra)},
            {"memory": provider_hints(n, free_mem, [64] * n, 40, max_extra)},
            {"example.com/gpu": provider_hints(n, gpus, gpus, 1, max_extra)},
            {"hugepages-1Gi": provider_hints(n, pages, [8] * n, 6, max_extra)},
            {"example.com/nic": provider_hints(n, nics, nics, 1, max_extra)}]


def fold_input(default, lists):
    b = max_of_min_affinity_counts(lists)
    out = [f"{default} {b} {len(lists)}"]
    for lst in lists:
        out.append(str(len(lst)))
        out.extend(f"{-1 if h.numa_affinity is None else h.numa_affinity.bits} {int(h.preferred)}" for h in lst)
    return "\n".join(out) + "\n"


def compile_fold(workdir):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src, exe = os.path.join(workdir, "fold.c"), os.path.join(workdir, "fold")
    with open(src, "w") as f:
        f.write(FOLD_C)
    subprocess.run([cc, "-O2", "-march=native", "-o", exe, src], check=True)
    return exe


def run_fold(exe, text, limit):
    out = subprocess.run([exe, str(limit)], input=text, capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), bool(int(out[1])), float(out[2]), float(out[3])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Floor: the kubelet's exhaustive fold (mergeFilteredHints + HintMerger.compare, narrowest) "
               "compiled with -O2, timing its own CPU time; in full up to 2e8 permutations, else a timed "
               "sample of 2e7 extrapolated to the whole cross product.  All rows interleaved per round.")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    impls = _impl.implementations("merge")
    native = impls.get("native")
    sizes = [2, 4, 8, 16] + ([] if args.quick else [32, 64])
    work = tempfile.mkdtemp(prefix="pynuma-fold-")
    try:
        exe = compile_fold(work)
        for n in sizes:
            dist = [[10 if i == j else 20 + abs(i - j) for j in range(n)] for i in range(n)]
            info = NUMAInfo.from_matrix(range(n), dist)
            for kind in ("aligned", "conflict"):
                providers = scenario(n, kind)
                counts = [len(next(iter(p.values()))) for p in providers]
                if not all(counts):
                    print(f"\n{n} nodes, {kind}: skipped (a provider has no hint: no merge happens)")
                    continue
                cross = 1
                for c in counts:
                    cross *= c
                pol = make_policy("best-effort", info)
                hint, admit, exact = pol.merge_ex(providers)
                print(f"\n{n} nodes, {kind}: hints per provider {'x'.join(map(str, counts))} "
                      f"(cross product {cross:.3g}); answer {hint} exact={exact}")
                lists = filter_providers_hints(providers)
                enc = [([h.numa_affinity.bits for h in lst], bytes(h.preferred for h in lst)) for lst in lists]
                default = info.default_mask().bits
                cases = {"end to end (public API, native core)": lambda: pol.merge(providers)}
                if native is not None:
                    cases["core (encoded lists)"] = lambda: native.merge(default, enc, False, None, MERGE_BUDGET)
                if n <= 16:
                    cases["pure e2e"] = lambda: HintMerger(info, filter_providers_hints(providers),
                                                           "best-effort").merge_ex(impls["pure"])
                external, note = {}, ""
                if exe and n <= 64:
                    text = fold_input(default, lists)
                    full = cross <= FULL_FOLD_MAX
                    if full:
                        mask, pref, _, _ = run_fold(exe, text, 0)
                        assert (mask, pref) == (hint.numa_affinity.bits, hint.preferred), (n, kind, mask, hint)
                        note = "C fold answer == pynuma's"
                    label = "C fold (kubelet's exhaustive)" + ("" if full else " ~extrapolated")

                    def fold_sample(text=text, full=full, cross=cross):
                        _, _, secs, done = run_fold(exe, text, 0 if full else 2e7)
                        sample = secs if full else secs / done * cross
                        return sample, sample

                    external[label] = fold_sample
                rounds = 3 if args.quick or n >= 16 else 9
                # CPU time throughout (the fold times its own): the host is shared
                stats = measure(cases, rounds=rounds, target_s=0.02, external=external, clock=time.process_time)
                print_table(stats, reference="end to end (public API, native core)")
                if note:
                    print(f"  {note}")
                target = TARGET_MS.get(n)
                if target:
                    e2e = stats["end to end (public API, native core)"].median * 1e3
                    print(f"  target end to end <= {target} ms: median {fmt(e2e / 1e3)} "
                          f"{'OK' if e2e <= target else 'MISSED'}")
                if n == 64:
                    print(f"  64 nodes: answer exact={exact} (bounded search when False)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
