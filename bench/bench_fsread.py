#!/usr/bin/env python3
"""The root-relative reader: native vs pure, and native vs a tiny C program (the floor)
reading the same files, as ratios measured in one run.

    python3 bench/bench_fsread.py [--root DIR] [--repeat N]

The file set is every readable attribute of the CPU topology and cache
directories plus the node files (what discovery reads).  The C floor opens
and reads each file the way the reader does (see --help), timed inside the
program; every row prints its cold first call, min and median.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pynuma import _impl  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import measure, print_table, ratio  # noqa: E402

FLOOR_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
/* Opens and reads like pynuma's reader: openat2(root, path, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS)
 * when argv[3] is 1 (else a component walk with O_NOFOLLOW), a first read() of a page, and a short
 * read of a plain sysfs attribute taken as the end (no read() that returns 0); files elsewhere are
 * read to EOF as the reader does.  Prints one sample (s per pass) per pass, argv[2] passes. */
static int short_read_ends(const char *p) {
    return !strncmp(p, "sys/devices/", 12) || !strncmp(p, "sys/bus/", 8) || !strncmp(p, "sys/class/", 10) ||
           !strncmp(p, "sys/kernel/mm/", 14);
}
static int walk(int root, const char *path) {
    char buf[4096]; strncpy(buf, path, sizeof buf - 1); buf[sizeof buf - 1] = 0;
    int dir = root, fd = -1;
    for (char *s = buf, *e; ; s = e + 1) {
        e = strchr(s, '/');
        if (e) *e = 0;
        fd = openat(dir, s, (e ? O_DIRECTORY : 0) | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (dir != root) close(dir);
        if (fd < 0 || !e) return fd;
        dir = fd;
    }
}
int main(int argc, char **argv) {
    int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC), reps = atoi(argv[2]), o2 = atoi(argv[3]), n = 0;
    static char *paths[100000]; static char line[4096], buf[65536];
    while (n < 100000 && fgets(line, sizeof line, stdin)) { line[strcspn(line, "\n")] = 0; paths[n++] = strdup(line); }
    struct open_how how; memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_CLOEXEC; how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    long sink = 0;
    for (int rep = 0; rep < reps; rep++) {
        struct timespec a, b; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (int i = 0; i < n; i++) {
            int fd = o2 ? (int)syscall(SYS_openat2, root, paths[i], &how, sizeof how) : walk(root, paths[i]);
            if (fd < 0) continue;
            int ends = short_read_ends(paths[i]);
            size_t chunk = 4096;
            for (;;) {
                ssize_t r = read(fd, buf, chunk);
                if (r <= 0) break;
                sink += r;
                if (ends && (size_t)r < chunk && r % 4096) break;
            }
            close(fd);
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        printf("%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    }
    fprintf(stderr, "%ld\n", sink & 1);
    return 0;
}
"""


def file_set(mod, rootfd):
    """Relative paths of small attribute files under cpu*/topology, cpu*/cache/index*, node*."""
    out = []
    cpu = "sys/devices/system/cpu"
    names = mod.list_at(rootfd, cpu)
    for name in sorted(n for n in names if n.startswith("cpu") and n[3:].isdigit()):
        for sub in ("topology",) + tuple(f"cache/{i}" for i in sorted(
                _try_list(mod, rootfd, f"{cpu}/{name}/cache")) if i.startswith("index")):
            for f in sorted(_try_list(mod, rootfd, f"{cpu}/{name}/{sub}")):
                out.append(f"{cpu}/{name}/{sub}/{f}")
    node = "sys/devices/system/node"
    for name in sorted(n for n in _try_list(mod, rootfd, node) if n.startswith("node")):
        for f in ("cpulist", "cpumap", "meminfo", "distance"):
            out.append(f"{node}/{name}/{f}")
    res = mod.read_many(rootfd, out)
    return [p for p, r in zip(out, res) if isinstance(r, bytes)]


def _try_list(mod, rootfd, path):
    try:
        return mod.list_at(rootfd, path)
    except OSError:
        return []


def compile_floor(workdir):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src, exe = os.path.join(workdir, "floor.c"), os.path.join(workdir, "floor")
    Path(src).write_text(FLOOR_C)
    subprocess.run([cc, "-O2", "-o", exe, src], check=True)
    return exe


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Floor: a C program reading the same files the way the reader does -- openat2 "
               "RESOLVE_IN_ROOT from the root fd (a component walk when the reader walks), a page per "
               "read(), a short read of a sysfs attribute taken as its end -- single-threaded like "
               "read_many, timing its own CPU time per pass (its first pass is its cold figure).  All "
               "rows are CPU time, interleaved per round; ratios are per-round medians.")
    ap.add_argument("--root", default="/", help="root directory to read (a dump works)")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)
    impls = _impl.implementations("fsread")
    if "native" not in impls:
        print("native fsread not built: run PYNUMA_NATIVE_ONLY=fsread python3 setup.py build_ext --inplace")
        return 1
    nat, pure = impls["native"], impls["pure"]
    rn, rp = nat.open_root(args.root), pure.open_root(args.root)
    paths = file_set(nat, rn)
    if not paths:
        print(f"no topology files under {args.root}")
        return 1
    openat2 = bool(nat.features(rn)["openat2"])
    dirs = sorted({p.rsplit("/", 1)[0] for p in paths})
    print(f"root {args.root}: {len(paths)} files in {len(dirs)} directories; openat2 {'on' if openat2 else 'off'}")
    print("reading every file once per call: native and pure reader vs a C floor reading them alike")
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_floor(tmp)
        external = {}
        if exe:
            def floor_pass():
                out = subprocess.run([exe, args.root, "2", "1" if openat2 else "0"], input="\n".join(paths) + "\n",
                                     capture_output=True, text=True, check=True)
                cold, warm = (float(x) for x in out.stdout.split())
                return warm, cold

            external["C floor (same opens and reads)"] = floor_pass
        cases = {
            "native read_many": lambda: nat.read_many(rn, paths),
            "pure read_many": lambda: pure.read_many(rp, paths),
            "native read_at per file": lambda: [nat.read_at(rn, p) for p in paths],
            "pure read_at per file": lambda: [pure.read_at(rp, p) for p in paths],
        }
        stats = measure(cases, rounds=args.rounds, target_s=0.03, external=external, clock=time.process_time)
    print_table(stats, reference="native read_many")
    if external:
        print(f"native read_many / C floor (per-round median): "
              f"{ratio(stats, 'native read_many', 'C floor (same opens and reads)'):.2f}x")
    dirs_stats = measure({"native list_at per dir": lambda: [nat.list_at(rn, d) for d in dirs],
                          "pure list_at per dir": lambda: [pure.list_at(rp, d) for d in dirs]},
                         rounds=args.rounds, clock=time.process_time)
    print_table(dirs_stats, reference="native list_at per dir")
    nat.close_root(rn)
    pure.close_root(rp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
