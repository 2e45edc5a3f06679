#!/usr/bin/env python3
"""Cgroup walk speed: native walker vs pure-Python twin vs a minimal C loop (the floor), in one run.

Builds synthetic kubelet trees (realistic v1 and v2 file sets, systemd driver)
on tmpfs (/dev/shm when present), then for 1,000 and 10,000 container cgroups
(two containers per pod) times, best of several runs:

* floor   -- a minimal C program (compiled here) that opens, lists and reads
             what the walker does, the way it does: each directory relative to
             its parent's fd, each file relative to its cgroup's directory (a
             container's as "container/file" below its pod), one read() per file,
             timing itself (CPU time) per pass;
* native  -- ``pynuma._native_cgwalk.walk`` (C, GIL released), raw records;
* pure    -- ``pynuma._pure_cgwalk.walk``, raw records;
* objects -- building ``PodCgroupStats`` values from native records.

Rows run in interleaved rounds; each prints its cold first call, min and
median per walk, the per-round median ratio to the floor, and microseconds
per cgroup.  Usage: python3 bench/bench_cgroups.py [--sizes 1000,10000] [--rounds 7]
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
sys.path.insert(0, HERE)

from pynuma import _impl  # noqa: E402
from pynuma.cgroups import walk as cgwalk  # noqa: E402
from pynuma.cgroups._spec import CONTAINER  # noqa: E402
from pynuma.cgroups.detect import detect  # noqa: E402
from pynuma.cgroups.synthetic import build_tree, make_pods  # noqa: E402
from pynuma.fsroot import FsRoot  # noqa: E402

from _harness import measure, print_table  # noqa: E402

FLOOR_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
/* argv[1]: a plan, one step a line, opened the way pynuma's walker opens:
 *   "B <path>"      open a base directory (absolute, once per hierarchy)
 *   "L <d> <name>"  open <name> below directory step <d> and list it (getdents64)
 *   "O <d> <name>"  open <name> below step <d> (another hierarchy's copy: not listed)
 *   "F <d> <rel>"   open <rel> below step <d> ("file" or "container/file"), one read(), close
 * Directories stay open until the end of the pass.  Prints one sample (ns) per pass, argv[2] passes. */
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
    int *fds = malloc((n + 1) * sizeof *fds);
    static char buf[65536], dbuf[32768];
    long sink = 0;
    for (int r = 0; r < reps; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (size_t i = 0; i < n; i++) {
            char *l = lines[i], *rest;
            fds[i] = -1;
            if (l[0] == 'B') {
                fds[i] = open(l + 2, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                continue;
            }
            long d = strtol(l + 2, &rest, 10);
            rest++;
            int dfd = fds[d];
            if (dfd < 0) continue;
            if (l[0] == 'F') {
                int fd = openat(dfd, rest, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) continue;
                sink += read(fd, buf, sizeof buf);
                close(fd);
                continue;
            }
            fds[i] = openat(dfd, rest, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (l[0] == 'L' && fds[i] >= 0)
                while ((d = syscall(SYS_getdents64, fds[i], dbuf, sizeof dbuf)) > 0) sink += d;
        }
        for (size_t i = 0; i < n; i++)
            if (fds[i] >= 0) close(fds[i]);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        printf("%ld\n", (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec));
    }
    fprintf(stderr, "%ld\n", sink & 1);
    return 0;
}
"""


def compile_floor(workdir: str) -> str:
    src = os.path.join(workdir, "floor.c")
    exe = os.path.join(workdir, "floor")
    with open(src, "w") as f:
        f.write(FLOOR_C)
    subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
    return exe


def floor_plan(root: str, layout, records, specs) -> list:
    """The walker's opens as floor steps: directories relative to their parent, files relative to
    their cgroup's directory, containers' files as "container/file" below the pod (leaves are read,
    never listed or opened)."""
    hier = [layout.hierarchy(c) for c in cgwalk._controllers(layout)]
    kp = layout.kubepods
    steps: list = []
    dirs: dict = {}

    def open_dir(base: int, rel: str) -> int:
        key = (base, rel)
        if key not in dirs:
            if not rel:
                steps.append(f"B {root + hier[base] + kp}")
            else:
                parent, _, name = rel.rpartition("/")
                p = open_dir(base, parent)
                steps.append(f"{'L' if base == 0 else 'O'} {p} {name}")
            dirs[key] = len(steps) - 1
        return dirs[key]

    for kind, _q, _u, _r, _c, path, _s, _b in records:
        leaf = kind == CONTAINER
        parent, _, name = path.rpartition("/")
        for base, fname, *_ in specs:
            if not os.path.exists(root + hier[base] + kp + ("/" + path if path else "") + "/" + fname):
                continue
            if leaf:
                steps.append(f"F {open_dir(base, parent)} {name}/{fname}")
            else:
                steps.append(f"F {open_dir(base, path)} {fname}")
        if not leaf:
            open_dir(0, path)
    return steps


def run(size: int, mode: str, base: str, floor_exe: str, rounds: int) -> dict:
    root = tempfile.mkdtemp(prefix=f"pynuma-cg-{mode}-{size}-", dir=base)
    try:
        build_tree(root, mode=mode, driver="systemd", pods=make_pods(size // 2, 2))
        fs = FsRoot(root)
        layout = detect(fs)
        impl = _impl.implementations("cgwalk")
        sizes = cgwalk.huge_sizes(fs)
        specs = [tuple(s) for s in cgwalk._file_specs(layout, sizes)]
        bases = cgwalk._bases(layout, layout.kubepods)
        systemd = layout.driver == "systemd"
        pure = impl["pure"]
        native = impl.get("native")
        recs = pure.walk(fs.root_fd, bases, systemd, specs, True, None)
        ncg = len(recs)
        plan = os.path.join(root, "floor.plan")
        with open(plan, "w") as f:
            f.write("\n".join(floor_plan(root, layout, recs, specs)) + "\n")

        def floor_pass():
            out = subprocess.run([floor_exe, plan, "2"], check=True, capture_output=True, text=True)
            cold, warm = (int(x) / 1e9 for x in out.stdout.split())
            return warm, cold

        cases = {"pure walk": lambda: pure.walk(fs.root_fd, bases, systemd, specs, True, None)}
        if native is not None:
            nrecs = native.walk(fs.root_fd, bases, systemd, specs, True, None)
            assert nrecs == recs, "native and pure disagree"
            cases["native walk"] = lambda: native.walk(fs.root_fd, bases, systemd, specs, True, None)
            cases["native walk + PodCgroupStats"] = lambda: cgwalk.pods_from_records(
                native.walk(fs.root_fd, bases, systemd, specs, True, None), sizes)
        # CPU time on both sides (the floor times its own): the host is shared, wall time would
        # measure the neighbours
        stats = measure(cases, rounds=rounds, target_s=0.05, external={"C floor": floor_pass},
                        clock=time.process_time)
        fs.close()
        return {"mode": mode, "containers": size, "cgroups": ncg, "stats": stats}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Floor: a C program opening, listing and reading what the walker does the way it does "
               "(parent-relative openat, container files as name/file below the pod, one read() each), "
               "single-threaded like the walker, timing its own CPU time per pass; its first pass is "
               "its cold figure.  Rows are interleaved per round; ratios are per-round medians.")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--modes", default="v2,v1")
    args = ap.parse_args(argv)
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="pynuma-floor-")
    try:
        floor_exe = compile_floor(work)
        print(f"cgroup walk of synthetic kubelet trees on {base or tempfile.gettempdir()}: "
              f"native walker and pure twin vs a C floor; per walk, then per cgroup")
        for mode in args.modes.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                r = run(size, mode, base, floor_exe, args.rounds)
                print(f"\n{r['mode']}, {r['containers']} containers, {r['cgroups']} cgroups:")
                print_table(r["stats"], reference="C floor")
                med = {k: v.median / r["cgroups"] * 1e6 for k, v in r["stats"].items()}
                print("  us per cgroup (median): " + ", ".join(f"{k} {v:.2f}" for k, v in med.items()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
