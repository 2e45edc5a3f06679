#!/usr/bin/env python3
"""The root-relative reader: native vs pure, and native vs a tiny C program (the floor)
reading the same files, as ratios measured in one run.

    python3 bench/bench_fsread.py [--root DIR] [--repeat N]

The file set is every readable attribute of the CPU topology and cache
directories plus the node files (what discovery reads).  The C floor opens,
reads to EOF and closes each file, in a loop, timed inside the program.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pynuma import _impl  # noqa: E402

FLOOR_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int root = open(argv[1], O_RDONLY | O_DIRECTORY), reps = atoi(argv[2]), n = 0;
    static char *paths[100000]; static char line[4096], buf[65536];
    while (n < 100000 && fgets(line, sizeof line, stdin)) { line[strcspn(line, "\n")] = 0; paths[n++] = strdup(line); }
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
        for (int r = 0; r < reps; r++)
            for (int i = 0; i < n; i++) {
                int fd = openat(root, paths[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0) continue;
                while (read(fd, buf, sizeof buf) > 0) {}
                close(fd);
            }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9) / reps;
        if (t < best) best = t;
    }
    printf("%.9f\n", best);
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


def best(fn, number=None):
    """Best per-call time of 3 rounds; ``number`` calls per round (default: ~0.1 s worth)."""
    if number is None:
        t = timeit.timeit(fn, number=1)
        number = max(1, int(0.1 / max(t, 1e-6)))
    return min(timeit.repeat(fn, number=number, repeat=3)) / number


def c_floor(root, paths, reps):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "floor.c"), os.path.join(tmp, "floor")
        Path(src).write_text(FLOOR_C)
        subprocess.run([cc, "-O2", "-o", exe, src], check=True)
        out = subprocess.run([exe, root, str(reps)], input="\n".join(paths) + "\n",
                             capture_output=True, text=True, check=True)
        return float(out.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/", help="root directory to read (a dump works)")
    ap.add_argument("--repeat", type=int, default=None, help="calls per timing (default: ~0.1 s worth)")
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
    print(f"root {args.root}: {len(paths)} files; openat2 {'on' if nat.features(rn)['openat2'] else 'off'}")
    rows = []
    t_nat_many = best(lambda: nat.read_many(rn, paths), args.repeat)
    rows.append(("read_many (one call)", t_nat_many, best(lambda: pure.read_many(rp, paths), args.repeat)))
    rows.append(("read_at per file", best(lambda: [nat.read_at(rn, p) for p in paths], args.repeat),
                 best(lambda: [pure.read_at(rp, p) for p in paths], args.repeat)))
    dirs = sorted({p.rsplit("/", 1)[0] for p in paths})
    rows.append(("list_at per dir", best(lambda: [nat.list_at(rn, d) for d in dirs], args.repeat),
                 best(lambda: [pure.list_at(rp, d) for d in dirs], args.repeat)))
    nat._walk_only(True)
    rows.append(("read_many, no openat2", best(lambda: nat.read_many(rn, paths), args.repeat),
                 best(lambda: pure.read_many(rp, paths), args.repeat)))
    nat._walk_only(False)
    print(f"{'operation':<24} {'native ms':>10} {'pure ms':>10} {'pure/native':>12}")
    for label, tn, tp in rows:
        print(f"{label:<24} {tn * 1e3:>10.3f} {tp * 1e3:>10.3f} {tp / tn:>11.1f}x")
    floor = c_floor(args.root, paths, max(1, int(0.1 / t_nat_many)))
    if floor:
        print(f"C floor (openat+read+close): {floor * 1e3:.3f} ms; "
              f"native read_many / floor = {t_nat_many / floor:.2f}x")
    nat.close_root(rn)
    pure.close_root(rp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
