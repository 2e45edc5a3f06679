#!/usr/bin/env python3
"""Fuzz every target under atheris (libFuzzer) for a bounded time.

    python3 tests/fuzz/run.py [--total-seconds 60] [--jobs 2] [--only NAME ...] [--artifacts DIR]
                              [--fallback]

Each target (``tests/fuzz/fuzz_<name>.py``) runs as a process of its own
for its share of the budget, starting from ``tests/fuzz/corpus/<name>``;
the inputs it finds go to a temporary directory, not into the repository.
A crash, an uncaught exception or an oracle's ``AssertionError`` is a
finding, written under ``--artifacts`` (a temporary directory by default);
once fixed, add it to the corpus as ``regress-<short>``.  Prints a table of
target, executions and findings; exit 1 on any finding.

Without atheris the leg is skipped (exit 0, said on stdout), unless
``--fallback``: then the same ``check`` functions run on mutated seeds for
the same budget, in this process.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
#: seconds a target's process spends before fuzzing (imports, instrumentation, the seeds' replay)
STARTUP = 2.0


def names() -> list:
    return sorted(p.stem[len("fuzz_"):] for p in HERE.glob("fuzz_*.py"))


def atheris_available() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


def executions(log: str) -> int:
    """Executions libFuzzer reports: the final stats, else its last ``#N`` status line."""
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    if m:
        return int(m.group(1))
    counts = re.findall(r"^#(\d+)\s", log, re.M)
    return int(counts[-1]) if counts else 0


def run_atheris(name: str, seconds: int, artifacts: Path):
    work = Path(tempfile.mkdtemp(prefix=f"pynuma-fuzz-{name}-"))  # new inputs land here
    cmd = [sys.executable, str(HERE / f"fuzz_{name}.py"), str(work), str(HERE / "corpus" / name),
           f"-max_total_time={seconds}", "-print_final_stats=1", f"-artifact_prefix={artifacts}/{name}-",
           "-rss_limit_mb=2048", "-timeout=10", "-max_len=4096"]
    env = dict(os.environ, PYTHONPATH=str(PROJECT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=seconds + 120,
                             env=env, cwd=str(PROJECT))
        log, failed = res.stdout + res.stderr, res.returncode != 0
    except subprocess.TimeoutExpired as err:
        log = f"{err.stdout or ''}{err.stderr or ''}\n(no end after {seconds + 120} s)"
        log, failed = log if isinstance(log, str) else str(log), True
    return executions(log), failed, summary(log) if failed else ""


def summary(log: str) -> str:
    """What a finding's log says: the Python exception (or libFuzzer's error) and where the input went."""
    start = log.find("=== Uncaught Python exception: ===")
    if start < 0:
        start = max(log.find("==ERROR"), log.find("ERROR: libFuzzer"), 0)
    ends = [i for i in (log.find("\n==", start + 1), log.find("\nINFO:", start + 1)) if i > start]
    shown = log[start:min(ends) if ends else start + 3000][:3000]
    written = re.search(r"Test unit written to (\S+)", log)
    return shown + (f"\ninput written to {written.group(1)}" if written else "")


def run_fallback(name: str, seconds: int, artifacts: Path):
    """Without atheris: mutated seeds and random bytes for ``seconds``, through the same oracle."""
    import random

    from tests.fuzz.targets import TARGETS

    check = TARGETS[name]
    seeds = [p.read_bytes() for p in sorted((HERE / "corpus" / name).glob("*"))] or [b""]
    rng = random.Random(name)
    deadline = time.monotonic() + seconds
    execs = 0
    while time.monotonic() < deadline:
        data = bytearray(rng.choice(seeds)) if rng.random() < 0.9 else bytearray(rng.randbytes(rng.randint(0, 64)))
        for _ in range(rng.randint(1, 4)):
            pos = rng.randint(0, len(data))
            op = rng.randint(0, 2)
            if op == 0:
                data[pos:pos] = rng.randbytes(rng.randint(1, 8))
            elif op == 1:
                del data[pos:pos + rng.randint(1, 8)]
            elif data:
                data[min(pos, len(data) - 1)] = rng.randrange(256)
        execs += 1
        try:
            check(bytes(data))
        except Exception as err:  # every escape is a finding
            path = artifacts / f"{name}-crash-{execs}"
            path.write_bytes(bytes(data))
            return execs, True, f"{type(err).__name__}: {str(err)[:2000]}\ninput written to {path}"
    return execs, False, ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--total-seconds", type=int, default=60, help="the whole leg's budget (default 60)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="targets fuzzed at once")
    ap.add_argument("--only", nargs="*", default=None, metavar="NAME")
    ap.add_argument("--artifacts", default=None, help="where findings are written (default: a temp dir)")
    ap.add_argument("--fallback", action="store_true",
                    help="without atheris, run the oracles on mutated seeds instead of skipping")
    args = ap.parse_args()
    targets = args.only or names()
    unknown = sorted(set(targets) - set(names()))
    if unknown:
        ap.error(f"no such target: {', '.join(unknown)} (targets: {', '.join(names())})")
    have_atheris = atheris_available()
    if not have_atheris and not args.fallback:
        print("atheris not installed: fuzz leg skipped (pip install atheris; or --fallback for generated inputs)")
        return 0
    artifacts = Path(args.artifacts or tempfile.mkdtemp(prefix="pynuma-fuzz-artifacts-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    if have_atheris:
        jobs = max(1, min(args.jobs, len(targets)))
        # the budget is wall time: each target's share, less what its process spends starting
        per = max(1, int(args.total_seconds * jobs / len(targets) - STARTUP))
        runner, engine = run_atheris, "atheris"
    else:
        sys.path.insert(0, str(PROJECT))
        jobs, per = 1, max(1, args.total_seconds // len(targets))
        runner, engine = run_fallback, "generated inputs (atheris not installed)"
    print(f"fuzz: {len(targets)} targets, {per} s each, {jobs} at a time, with {engine}; findings go to {artifacts}")
    start = time.monotonic()
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda name: runner(name, per, artifacts), targets))
    print(f"{'target':<16} {'executions':>11}  findings")
    for name, (execs, finding, _log) in zip(targets, results):
        print(f"{name:<16} {execs:>11}  {1 if finding else 0}")
    for name, (_execs, finding, log) in zip(targets, results):
        if finding:
            print(f"\n== {name}: finding\n    " + log.replace("\n", "\n    "))
    found = sum(1 for _, finding, _ in results if finding)
    print(f"fuzz: {sum(r[0] for r in results)} executions in {time.monotonic() - start:.0f} s, "
          f"{found} target(s) with findings")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
