"""Binding costs in one run: native vs pure-Python syscalls, and ``pynuma run`` vs ``numactl``.

    python3 bench/bench_bind.py

Prints per-call times of sched_getaffinity/sched_setaffinity through the
native core and through the pure twin (CPython's os.*), get/set_mempolicy
through the native core and the pure twin (libc's syscall through cffi in
ABI mode), and the wall time of launching ``true`` under
``pynuma run --cpus 0 --membind 0`` against ``numactl`` (when installed)
and a bare launch.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from pynuma import _impl  # noqa: E402


def per_call(fn, n: int = 5000, repeats: int = 7) -> float:
    """Best-of-``repeats`` mean ns per call (the minimum resists noise from other load)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def launch(cmd, n: int = 10) -> float:
    best = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main() -> int:
    impls = _impl.implementations("sys")
    mask = sum(1 << c for c in os.sched_getaffinity(0))
    rows = []
    for name, call in (("sched_getaffinity", lambda m: m.sched_getaffinity(0, 64)),
                       ("sched_setaffinity", lambda m: m.sched_setaffinity(0, mask))):
        pure = per_call(lambda: call(impls["pure"]))
        native = per_call(lambda: call(impls["native"])) if "native" in impls else None
        rows.append((name, native, pure))
    def policy_calls(mod, box):
        box["get"] = per_call(lambda: mod.get_mempolicy(64, 0, 0))
        box["set"] = per_call(lambda: mod.set_mempolicy(0, 0, 64))

    timed = {}
    for kind, mod in impls.items():
        if not mod.mempolicy_supported():
            continue
        timed[kind] = {}
        worker = threading.Thread(target=policy_calls, args=(mod, timed[kind]))  # policy is per thread
        worker.start()
        worker.join()
    for call in ("get", "set"):
        rows.append((f"{call}_mempolicy", timed.get("native", {}).get(call), timed.get("pure", {}).get(call)))
    print(f"{'call':<20}{'native ns':>12}{'pure ns':>12}{'pure/native':>13}")
    for name, native, pure in rows:
        ratio = f"{pure / native:>12.1f}x" if native and pure else f"{'-':>13}"
        print(f"{name:<20}{native or float('nan'):>12.0f}{pure or float('nan'):>12.0f}{ratio}")

    bare = launch(["true"])
    ours = launch([sys.executable, "-m", "pynuma", "run", "--cpus", "0", "--membind", "0", "--", "true"])
    python = launch([sys.executable, "-c", "pass"])
    print(f"\nlaunch 'true': bare {bare:.1f} ms, python -c pass {python:.1f} ms, pynuma run {ours:.1f} ms "
          f"(pynuma run - python start = {ours - python:.1f} ms)")
    numactl = shutil.which("numactl")
    if numactl:
        theirs = launch([numactl, "--physcpubind", "0", "--membind", "0", "true"])
        print(f"numactl {theirs:.1f} ms; pynuma run / numactl = {ours / theirs:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
