"""Whole-process cost of pynuma's read-only commands (and ``pynuma run``) beside the bare interpreter.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install .      # a regular (non-editable) install
    /tmp/v/bin/python bench/bench_cli_startup.py [--rounds N] [--only hugepages,qos]

What is compared, in one run: each command as a whole process
(``PY PYNUMA_SCRIPT CMD ...``) against the *floor*, the same interpreter
running ``-c pass`` (start-up and ``site``, nothing of pynuma), and, for
``run``, ``numactl -- true`` and plain ``true`` when numactl is installed.
Every round runs every compared process once, in a rotated order
(interleaved, so drift and load hit all alike); the first round is the cold
call, reported apart and left out of min and median.  Per command: wall
min and median, CPU time (user + system, from the child's rusage) median,
and the median over rounds of (command - floor) in the same round, which is
checked against the budget: floor + 25 ms for read-only commands, floor +
10 ms for ``run``.  An editable install adds an import hook to every start,
so the script says when the interpreter's pynuma is not a regular install.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

READ_ONLY_BUDGET_MS = 25.0
RUN_BUDGET_MS = 10.0

POD_YAML = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: "0b3c3f6e"}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 500m, memory: 1Gi}
      limits: {cpu: 500m, memory: 1Gi}
"""

STATE_SCRIPT = ("import sys\nfrom pynuma.cpuset import CPUSet\nfrom pynuma.state.cpu_checkpoint import dumps\n"
                "sys.stdout.write(dumps('static', CPUSet(range(2)), {}))\n")

MEMORY_STATE_SCRIPT = (
    "from pynuma.policy.memorymanager.state import Block, MemoryState, MemoryTable, NUMANodeState\n"
    "from pynuma.state.memory_checkpoint import write_checkpoint\n"
    "t = MemoryTable(2 << 30, 512 << 20, 1536 << 20, 1 << 30, 512 << 20)\n"
    "write_checkpoint('memory_manager_state', 'Static', MemoryState({0: NUMANodeState(1, {'memory': t}, [0])},\n"
    "                 {'uid': {'app': [Block((0,), 'memory', 1 << 30)]}}))\n")

PROBE = ("import sys, pynuma\nhooks = [f for f in sys.meta_path if 'editable' in type(f).__name__.lower()\n"
         "         or 'editable' in getattr(f, '__module__', '')]\n"
         "print(pynuma.__file__)\nprint(len(hooks))\n")


def _commands(py: str, script: str, work: str):
    """(label, argv, budget ms or None) in a fixed order; the floor first."""
    pod = os.path.join(work, "pod.yaml")
    state = os.path.join(work, "cpu_manager_state")
    with open(pod, "w") as f:
        f.write(POD_YAML)
    with open(state, "w") as f:
        f.write(subprocess.run([py, "-c", STATE_SCRIPT], check=True, capture_output=True, text=True,
                               cwd=work).stdout)
    subprocess.run([py, "-c", MEMORY_STATE_SCRIPT], check=True, cwd=work)
    memory_state = os.path.join(work, "memory_manager_state")
    pn = [py, script]
    cmds = [("python -c pass", [py, "-c", "pass"], None)]
    for label, args in (("hugepages", ["hugepages"]), ("cgroups", ["cgroups"]), ("show", ["show"]),
                        ("eviction", ["eviction"]), ("allocatable", ["allocatable"]),
                        ("qos POD.yaml", ["qos", pod]), ("state show", ["state", "show", state]),
                        ("state show memory", ["state", "show", memory_state])):
        cmds.append((label, pn + args, READ_ONLY_BUDGET_MS))
    cmds.append(("run -- true", pn + ["run", "--", "true"], RUN_BUDGET_MS))
    if shutil.which("numactl"):
        cmds.append(("numactl -- true", ["numactl", "--", "true"], None))
    cmds.append(("true", [shutil.which("true") or "/bin/true"], None))
    return cmds


def _once(argv, cwd):
    """Wall ms, CPU ms, exit status of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - t0) * 1e3
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3, proc.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Floor: the same interpreter running '-c pass' in the same rounds "
                                        "(interpreter start + site, no pynuma import); budgets are checked on "
                                        "the median of per-round differences, never best-minus-best.")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the install to measure")
    ap.add_argument("--pynuma", help="the pynuma launcher (default: 'pynuma' beside --python)")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--only", help="comma-separated labels to keep (besides the floor)")
    args = ap.parse_args(argv)
    script = args.pynuma or os.path.join(os.path.dirname(args.python), "pynuma")
    if not os.path.exists(script):
        print(f"no pynuma launcher at {script}: install pynuma for {args.python} or pass --pynuma", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="pynuma-startup-")
    try:
        where, hooks = subprocess.run([args.python, "-c", PROBE], check=True, capture_output=True, text=True,
                                      cwd=work).stdout.split()
        print(f"interpreter: {args.python}\npynuma: {where}")
        if int(hooks):
            print("warning: an editable install: its import hook inflates every start; measure a regular install")
        cmds = _commands(args.python, script, work)
        if args.only:
            keep = set(args.only.split(","))
            cmds = [c for c in cmds if c[0] == "python -c pass" or c[0] in keep]
        walls = {c[0]: [] for c in cmds}
        cpus = {c[0]: [] for c in cmds}
        cold = {}
        for r in range(args.rounds + 1):
            order = cmds[r % len(cmds):] + cmds[:r % len(cmds)]
            for label, cmd, _budget in order:
                wall, cpu, rc = _once(cmd, work)
                if rc != 0:
                    print(f"{label}: exit status {rc} ({' '.join(cmd)})", file=sys.stderr)
                    return 1
                if r == 0:
                    cold[label] = wall
                else:
                    walls[label].append(wall)
                    cpus[label].append(cpu)
        floor = walls["python -c pass"]
        print(f"{args.rounds} interleaved rounds (+1 cold); ms")
        print(f"{'process':<18} {'cold':>7} {'min':>7} {'median':>7} {'cpu med':>8} {'- floor':>8}  budget")
        missed = 0
        for label, _cmd, budget in cmds:
            w = walls[label]
            diff = statistics.median(a - b for a, b in zip(w, floor))
            verdict = ""
            if budget is not None:
                ok = diff <= budget
                missed += not ok
                verdict = f"<= +{budget:g}: {'OK' if ok else 'MISSED'}"
            print(f"{label:<18} {cold[label]:>7.1f} {min(w):>7.1f} {statistics.median(w):>7.1f} "
                  f"{statistics.median(cpus[label]):>8.1f} {diff:>+8.1f}  {verdict}")
        return 1 if missed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
