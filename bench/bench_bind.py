"""Binding costs in one run: native vs pure-Python syscalls, and ``pynuma run`` vs ``numactl``.

    python3 bench/bench_bind.py

Prints per-call times of sched_getaffinity/sched_setaffinity through the
native core and through the pure twin (CPython's os.*), get/set_mempolicy
through the native core and the pure twin (libc's syscall through cffi in
ABI mode), and the wall time of launching ``true`` under
``pynuma run --cpus 0 --membind 0`` against ``numactl`` (when installed),
``python -c pass`` and a bare launch; every row in interleaved rounds
(cold first call, min, median).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import measure, print_table  # noqa: E402

from pynuma import _impl  # noqa: E402


def _launcher(python: str, installed: bool):
    """How to start pynuma: the launcher of ``python``'s install (``installed``), else this checkout's."""
    script = os.path.join(os.path.dirname(python), "pynuma")
    if installed and os.path.exists(script):
        return [python, script]
    project = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["PYTHONPATH"] = project + os.pathsep + os.environ.get("PYTHONPATH", "")  # for the children
    return [python, os.path.join(project, "bin", "pynuma")]


def _process(argv):
    def once():
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0

    return once


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Floors: CPython's os.sched_{get,set}affinity (the pure twin) for the syscalls; for launching, "
               "'true' alone, 'python -c pass' and numactl with the same placement, all interleaved per round "
               "(wall time of the whole process; bench_cli_startup.py measures more start-up cases).")
    ap.add_argument("--python", help="interpreter whose pynuma install to launch (default: this checkout)")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    installed = args.python is not None
    args.python = args.python or sys.executable
    impls = _impl.implementations("sys")
    mask = sum(1 << c for c in os.sched_getaffinity(0))
    cases = {}
    for name, call in (("sched_getaffinity", lambda m: m.sched_getaffinity(0, 64)),
                       ("sched_setaffinity", lambda m: m.sched_setaffinity(0, mask))):
        if "native" in impls:
            cases[f"{name} native"] = lambda c=call: c(impls["native"])
        cases[f"{name} pure (os.*)"] = lambda c=call: c(impls["pure"])
    stats = measure(cases, rounds=args.rounds, target_s=0.005)
    print("syscalls, per call:")
    print_table(stats, width=34)
    policy: dict = {}
    for kind, mod in impls.items():
        if not mod.mempolicy_supported():
            continue

        def policy_calls(mod=mod, kind=kind):  # the memory policy is per thread: keep it off the main thread
            policy.update(measure({f"get_mempolicy {kind}": lambda: mod.get_mempolicy(64, 0, 0),
                                   f"set_mempolicy {kind}": lambda: mod.set_mempolicy(0, 0, 64)},
                                  rounds=args.rounds, target_s=0.005))

        worker = threading.Thread(target=policy_calls)
        worker.start()
        worker.join()
    if policy:
        print_table(policy, width=34)

    procs = {"true": ["true"], "python -c pass": [args.python, "-c", "pass"],
             "pynuma run --cpus 0 --membind 0 -- true": _launcher(args.python, installed) + [
                 "run", "--cpus", "0", "--membind", "0", "--", "true"]}
    numactl = shutil.which("numactl")
    if numactl:
        procs["numactl --physcpubind 0 --membind 0 true"] = [numactl, "--physcpubind", "0", "--membind", "0", "true"]
    launch = measure({}, rounds=args.rounds, external={k: _wrap(_process(v)) for k, v in procs.items()})
    print("\nlaunching 'true', whole process:")
    print_table(launch, reference="python -c pass", width=44)
    return 0


def _wrap(once):
    def sample():
        t = once()
        return t, t

    return sample


if __name__ == "__main__":
    sys.exit(main())
