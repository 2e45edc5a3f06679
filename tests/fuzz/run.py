#!/usr/bin/env python3
"""Fuzz every target for a bounded time: atheris (libFuzzer) when installed, generated inputs otherwise.

    python3 tests/fuzz/run.py [--total-seconds 60] [--only NAME ...]

Each target runs in a process of its own for its share of the budget,
starting from ``tests/fuzz/corpus/NAME``; a crash or an oracle's
AssertionError is a finding, saved under ``--artifacts`` (add it to the
corpus as ``regress-*`` once fixed).  Prints one line per target:
executions and findings.  Exit 1 on any finding.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]

CHILD = """
import sys
sys.path.insert(0, {project!r})
import atheris
with atheris.instrument_imports(include=["pynuma"]):
    import pynuma.parse, pynuma.quantity, pynuma._yamlsubset  # noqa: F401
    from tests.fuzz.targets import TARGETS
check = TARGETS[{name!r}]
atheris.Setup(sys.argv, check)
atheris.Fuzz()
"""


def _atheris_available() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


def run_atheris(name: str, seconds: int, artifacts: Path):
    corpus = HERE / "corpus" / name
    work = Path(tempfile.mkdtemp(prefix=f"fuzz-{name}-"))  # new inputs go here, not into the repository
    cmd = [sys.executable, "-c", CHILD.format(project=str(PROJECT), name=name), str(work), str(corpus),
           f"-max_total_time={seconds}", "-print_final_stats=1", f"-artifact_prefix={artifacts}/{name}-",
           "-rss_limit_mb=2048", "-timeout=10", "-max_len=4096"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120,
                         env=dict(os.environ, PYTHONPATH=str(PROJECT)))
    log = res.stdout + res.stderr
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log) or re.findall(r"#(\d+)\s", log)
    execs = int(m.group(1)) if hasattr(m, "group") else int(m[-1]) if m else 0
    finding = res.returncode != 0
    return execs, finding, log[-3000:] if finding else ""


def run_generated(name: str, seconds: int, artifacts: Path):
    """Without atheris: mutated seeds and random bytes for ``seconds``, same oracle."""
    import random

    sys.path.insert(0, str(PROJECT))
    from tests.fuzz.targets import TARGETS

    check = TARGETS[name]
    seeds = [p.read_bytes() for p in sorted((HERE / "corpus" / name).glob("*"))] or [b""]
    rng = random.Random(name)
    deadline = time.monotonic() + seconds
    execs = 0
    while time.monotonic() < deadline:
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            pos = rng.randint(0, len(data))
            op = rng.randint(0, 2)
            if op == 0:
                data[pos:pos] = rng.randbytes(rng.randint(1, 8))
            elif op == 1:
                del data[pos:pos + rng.randint(1, 8)]
            elif data:
                data[min(pos, len(data) - 1)] = rng.randrange(256)
        try:
            check(bytes(data))
        except BaseException as err:  # noqa: B902 - every escape is a finding
            (artifacts / f"{name}-crash-{execs}").write_bytes(bytes(data))
            return execs, True, f"{type(err).__name__}: {err}"[:3000]
        execs += 1
    return execs, False, ""


def main() -> int:
    sys.path.insert(0, str(PROJECT))
    from tests.fuzz.targets import TARGETS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--total-seconds", type=int, default=60)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--artifacts", default=None, help="where findings are written (default: a temp dir)")
    args = ap.parse_args()
    names = args.only or sorted(TARGETS)
    per = max(2, args.total_seconds // len(names))
    artifacts = Path(args.artifacts or tempfile.mkdtemp(prefix="fuzz-artifacts-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    engine = "atheris" if _atheris_available() else "generated inputs (atheris not installed)"
    print(f"fuzz: {len(names)} targets x {per} s with {engine}; findings go to {artifacts}")
    runner = run_atheris if engine == "atheris" else run_generated
    found = 0
    total = 0
    for name in names:
        execs, finding, log = runner(name, per, artifacts)
        total += execs
        found += finding
        print(f"  {name:<16} {execs:>9} executions  {'FINDING' if finding else 'no findings'}")
        if finding:
            print("    " + log.replace("\n", "\n    "))
    print(f"fuzz: {total} executions, {found} target(s) with findings")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
