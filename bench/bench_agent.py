#!/usr/bin/env python3
"""Node agent cost: one eviction cycle and one status, each against a C floor reading the same files.

Builds a synthetic node on tmpfs (/dev/shm when present): a two-NUMA-node
machine in sysfs, /proc, the system files a status reads, and a kubelet
cgroup v2 tree with 100 pods x 10 containers (1,000 container cgroups).
Then, in one run, interleaved, best CPU time of several rounds:

* ``sync()``   -- one eviction cycle: signals, the cgroup walk, thresholds, ranking;
* ``status()`` -- capacity, allocatable, conditions, system info, addresses;
* floor        -- a minimal C program (compiled here) that lists the same directories,
                  open/read/closes the same files and statvfs()es the same paths,
                  recorded while the agent ran;

and reports each as a ratio to its floor, the first (cold) call beside the
best.  Last, an idle agent with the default periods (Lease every 10 s,
cycle every 10 s, status report every minute) runs on a background thread
for ``--idle`` seconds: its CPU use, per minute and as a share of one core
(target: under 1 %).
Usage: python3 bench/bench_agent.py [--repeat 7] [--idle 60] [--pods 100] [--containers 10]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from pynuma import _impl  # noqa: E402
from pynuma.agent import AgentConfig, NodeAgent  # noqa: E402
from pynuma.cgroups import walk as cgwalk  # noqa: E402
from pynuma.cgroups._spec import CONTAINER  # noqa: E402
from tests.agent.conftest import write_node  # noqa: E402

FLOOR_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
/* argv[1]: "D dir" lists, "F file" open/read/closes, "S path" statvfs()es. Prints best CPU ns of argv[2] runs. */
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    int reps = atoi(argv[2]);
    size_t cap = 1 << 16, n = 0;
    char **lines = malloc(cap * sizeof *lines);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = strdup(line);
    }
    static char buf[65536];
    long best = -1, sink = 0;
    for (int r = 0; r < reps; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (size_t i = 0; i < n; i++) {
            const char *p = lines[i] + 2;
            if (lines[i][0] == 'D') {
                DIR *d = opendir(p);
                if (!d) continue;
                struct dirent *e;
                while ((e = readdir(d))) sink += e->d_type;
                closedir(d);
            } else if (lines[i][0] == 'S') {
                struct statvfs st;
                if (statvfs(p, &st) == 0) sink += st.f_bavail;
            } else {
                int fd = open(p, O_RDONLY | O_CLOEXEC);
                if (fd < 0) continue;
                sink += read(fd, buf, sizeof buf);
                close(fd);
            }
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        long ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
        if (best < 0 || ns < best) best = ns;
    }
    printf("%ld %ld\n", best, sink & 1);
    return 0;
}
"""


class Recorder:
    """Wraps the agent's FsRoot and the cgroup walker to note every directory, file and statvfs touched."""

    WRAPPED = ("read_bytes", "read_many", "listdir", "statvfs", "stat")

    def __init__(self, agent, root: str) -> None:
        self.agent, self.root, self.lines = agent, root, []
        self.walker = cgwalk._walker

    def __enter__(self):
        fs, rec = self.agent._fs, self

        def wrap(name, kind):
            method = getattr(fs, name)

            def recorded(path, *args, **kw):
                paths = [path] if isinstance(path, str) else list(path)
                rec.lines += [f"{kind} {rec.root}{p}" for p in paths]
                return method(path if isinstance(path, str) else paths, *args, **kw)
            setattr(fs, name, recorded)  # an instance attribute, removed on exit

        for name, kind in zip(self.WRAPPED, "FFDSS"):
            wrap(name, kind)

        class Walker:
            @staticmethod
            def walk(fd, bases, systemd, specs, full, hook):
                recs = rec.walker.walk(fd, bases, systemd, specs, full, hook)
                rec.lines += walk_lines(rec.root, bases, specs, recs, full)
                return recs

        cgwalk._walker = Walker
        return self

    def __exit__(self, *exc):
        for name in self.WRAPPED:
            delattr(self.agent._fs, name)
        cgwalk._walker = self.walker


def walk_lines(root, bases, specs, recs, full):
    """What the cgroup walker lists and reads for these records, as absolute host paths."""
    lines = []
    for rec in recs:
        kind, path = rec[0], rec[5]
        rel = "/" + path if path else ""
        if full and kind != CONTAINER:
            lines.append(f"D {root}/{bases[0]}{rel}")
        for spec in specs:
            p = f"{root}/{bases[spec[0]]}{rel}/{spec[1]}"
            if bases[spec[0]] and os.path.exists(p):
                lines.append("F " + p)
    return lines


def cpu(fn) -> float:
    t = time.process_time()  # CPU time: the host is shared, wall time would measure the neighbours
    fn()
    return time.process_time() - t


def floor_seconds(exe: str, lines, work: str, name: str) -> float:
    path = os.path.join(work, name + ".list")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    out = subprocess.run([exe, path, "1"], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[0]) / 1e9


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--idle", type=float, default=60.0, help="seconds of idle agent to measure (0: skip)")
    ap.add_argument("--pods", type=int, default=100)
    ap.add_argument("--containers", type=int, default=10, help="containers per pod")
    args = ap.parse_args(argv)
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="pynuma-bench-agent-", dir=base)
    try:
        exe = os.path.join(work, "floor")
        with open(exe + ".c", "w") as f:
            f.write(FLOOR_C)
        subprocess.run(["cc", "-O2", "-o", exe, exe + ".c"], check=True)
        root = write_node(os.path.join(work, "node"), pods=args.pods, containers_per_pod=args.containers)
        print(f"tmpfs: {base or tempfile.gettempdir()}; native: {_impl.native_available()}; "
              f"{args.pods} pods x {args.containers} containers")
        with NodeAgent(root, AgentConfig(), node_name="bench") as agent:
            cold_sync = cpu(agent.sync)
            cold_status = cpu(agent.status)
            with Recorder(agent, root) as rec:
                result = agent.sync()
            sync_lines = rec.lines
            with Recorder(agent, root) as rec:
                agent.status()
            status_lines = rec.lines
            assert result.containers == args.pods * args.containers, result.containers
            rows = {"sync": ([], [], sync_lines), "status": ([], [], status_lines)}
            for _ in range(args.repeat):  # interleaved rounds, best of each
                for name, (mine, floor, lines) in rows.items():
                    floor.append(floor_seconds(exe, lines, work, name))
                    mine.append(cpu(agent.sync if name == "sync" else agent.status))
            print(f"{'call':<8} {'files':>6} {'cold ms':>8} {'best ms':>8} {'floor ms':>9} {'ratio':>6}")
            for name, cold in (("sync", cold_sync), ("status", cold_status)):
                mine, floor, lines = rows[name]
                print(f"{name:<8} {len(lines):>6} {cold * 1e3:>8.2f} {min(mine) * 1e3:>8.2f} "
                      f"{min(floor) * 1e3:>9.3f} {min(mine) / min(floor):>6.1f}")
        if args.idle > 0:
            with NodeAgent(root, AgentConfig(), node_name="bench") as agent:
                agent.start()
                time.sleep(1.0)  # the first pass (everything due at once) is not idling
                used = cpu(lambda: time.sleep(args.idle))
                agent.stop()
            per_minute = used * 60.0 / args.idle
            print(f"idle agent (default periods, {args.pods * args.containers} containers): "
                  f"{per_minute * 1e3:.1f} ms CPU per minute = {per_minute / 60 * 100:.3f} % of one core")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
