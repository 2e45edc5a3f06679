"""``pynuma.processes`` on the live host, checked against the kernel's and numastat's own views.

Only child processes this test starts are looked at closely; listing every
process only reads.  The numastat comparison needs Debian's ``numactl``
package (skipped without it).
"""
from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from pynuma import processes
from pynuma.cpuset import CPUSet
from pynuma.procs import host as procs_host
import pynuma.procs as procs_pkg

MB = 1 << 20
ALLOCATE = textwrap.dedent("""
    import os, sys, threading, time
    size = int(sys.argv[1]) << 20
    block = bytearray(size)
    for i in range(0, size, 4096):
        block[i] = 1
    pin = [int(c) for c in sys.argv[2].split(",") if c]
    def worker():
        if len(pin) > 1:
            os.sched_setaffinity(0, {pin[1]})
        time.sleep(120)
    if pin:
        os.sched_setaffinity(0, {pin[0]})
    threading.Thread(target=worker, daemon=True).start()
    time.sleep(0.05)
    print("ready", flush=True)
    time.sleep(120)
""")


def spawn(mb: int = 32, pin: str = ""):
    proc = subprocess.Popen([sys.executable, "-c", ALLOCATE, str(mb), pin], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.fixture
def child():
    proc = spawn()
    yield proc
    proc.kill()
    proc.wait()


def test_a_child_as_the_kernel_sees_it(child):
    found = processes([child.pid])
    assert found.missing == () and len(found) == 1
    p = found[0]
    assert p.pid == child.pid and p.name.startswith("python")
    assert p.user == pwd.getpwuid(os.getuid()).pw_name and p.uid == os.getuid()
    assert p.cmdline[0] == sys.executable and p.cmdline[-1] == ""
    assert p.cpus_allowed == CPUSet(os.sched_getaffinity(child.pid))
    assert p.threads == 2 and not p.kernel_thread
    assert p.running_cpus and p.running_cpus <= p.cpus_allowed
    assert p.memory_bytes >= 32 * MB
    # numa_maps counts the pages mapped in the process; VmRSS counts them too
    assert abs(p.memory_bytes - p.rss_bytes) <= 0.1 * p.rss_bytes
    assert p.policy is not None and p.policy.mode == "default"
    assert 0.0 <= p.remote_share <= 1.0


def test_thread_affinities_add_up():
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two allowed CPUs")
    proc = spawn(1, f"{allowed[0]},{allowed[-1]}")
    try:
        [p] = processes([proc.pid])
        # the main thread may run on one CPU, its worker on another: the process may run on both
        assert p.cpus_allowed == CPUSet([allowed[0], allowed[-1]])
        assert p.running_cpus <= p.cpus_allowed
    finally:
        proc.kill()
        proc.wait()


def test_every_process_is_listed_or_counted():
    found = processes()
    pids = {p.pid for p in found}
    assert os.getpid() in pids
    assert found.kernel_threads >= 0 and found.vanished >= 0
    assert all(0.0 <= p.remote_share <= 1.0 for p in found)


def test_a_process_that_exits_meanwhile_is_counted_not_an_error(monkeypatch):
    proc = spawn(1)
    real = procs_pkg._reader.read_processes

    def exit_first(rootfd, pids, flags):
        proc.kill()
        proc.wait()
        return real(rootfd, pids, flags)

    monkeypatch.setattr(procs_pkg._reader, "read_processes", exit_first)
    found = processes()
    assert proc.pid not in {p.pid for p in found}
    assert found.vanished >= 1


def test_a_pid_gone_before_psutil_looks_is_counted(monkeypatch):
    import psutil

    proc = subprocess.Popen(["true"])
    proc.wait()
    monkeypatch.setattr(psutil, "pids", lambda: [proc.pid, os.getpid()])
    found, vanished, missing = procs_host.identities(None, procs_pkg.Selector())
    assert list(found) == [os.getpid()] and vanished == 1 and missing == []


PRIVILEGE_DROP = textwrap.dedent("""
    import io, json, os, sys
    from pynuma.cli import main
    out, sys.stdout = sys.stdout, io.StringIO()
    main(["procs", "--all", "--json"])            # as root: every module the command needs gets imported
    sys.stdout = out
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    sys.exit(main(["procs", "--all", "--json"]))
""")


@pytest.mark.skipif(os.geteuid() != 0, reason="drops root privileges to see access denied")
def test_an_unprivileged_listing_skips_and_counts_denied_processes():
    res = subprocess.run([sys.executable, "-c", PRIVILEGE_DROP], capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert all(r["uid"] == 65534 for r in rows)
    assert re.search(r"skipped .*\d+ denied access", res.stderr)


def numastat_mb(pid: int) -> dict:
    """``{node: MB}`` of the Total row of ``numastat -p PID``."""
    out = subprocess.run(["numastat", "-p", str(pid)], capture_output=True, text=True, timeout=60).stdout
    lines = out.splitlines()
    header = next(line for line in lines if line.strip().startswith("Node"))
    nodes = [int(n) for n in re.findall(r"Node (\d+)", header)]
    total = next(line for line in lines if line.startswith("Total"))
    values = [float(v) for v in total.split()[1:]]
    return dict(zip(nodes, values[:len(nodes)]))


@pytest.mark.skipif(shutil.which("numastat") is None, reason="numastat (Debian numactl) not installed")
def test_per_node_totals_agree_with_numastat():
    kids = [spawn(mb) for mb in (8, 24, 40)]
    try:
        pids = [k.pid for k in kids] + [os.getpid()]
        for pid in pids:
            before = processes([pid])[0]
            theirs = numastat_mb(pid)
            after = processes([pid])[0]
            for node, mb in theirs.items():
                low = min(before.memory_by_node.get(node, 0), after.memory_by_node.get(node, 0)) / MB
                high = max(before.memory_by_node.get(node, 0), after.memory_by_node.get(node, 0)) / MB
                # numastat prints MB with two decimals: 0.005 MB either way is rounding
                assert low - 0.006 <= mb <= high + 0.006, (pid, node, mb, low, high)
            assert set(before.memory_by_node) <= set(theirs)
    finally:
        for k in kids:
            k.kill()
            k.wait()


def test_cli_all_json_runs_quickly_enough_to_use():
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "pynuma", "procs", "--all", "--json"], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert rows and all({"pid", "name", "cpus_allowed", "memory_by_node", "remote_share"} <= set(r) for r in rows)
    assert time.perf_counter() - start < 60  # a hang guard, not a speed claim (bench/bench_procs.py measures)
