#!/usr/bin/env python3
"""Discovery speed on every corpus dump, like for like, in one run.

What is compared, per dump of ``$PYNUMA_CONFORMANCE_DIR/topology`` (default
``../shared/conformance/topology``):

* **floor**: a C program, compiled here, that does exactly the I/O one
  ``discover()`` did (recorded with ``bench/recording.py``) the way pynuma's
  native reader does it: every file, directory and kind check opened with
  ``openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)`` from the root fd
  (plain ``openat`` where the kernel has no openat2, as pynuma's reader then
  walks), files opened ``O_NONBLOCK`` and read only when ``fstat`` says they
  are regular (pynuma's guard against a FIFO or device in a dump: one more
  syscall per file, on both sides), in a first 4 KiB ``read()`` growing to 64 KiB, a short
  read ending the file only under ``/sys/{devices,bus,class,kernel/mm}``
  (as ``pn_read_one``), directories listed with ``readdir``.  One thread,
  as pynuma (both run one).
* **native** / **pure**: ``discover(root)`` (native core, and
  ``PYNUMA_PURE=1``) in a fresh process each round, as the floor, from the
  regular install below (its modules byte-compiled, as pip leaves them),
  warm: after its first call, the same batch of passes as the floor's.
* **first**: that first ``discover(root)`` in each fresh process (its modules
  imported, nothing discovered yet), reported apart from the warm figure:
  ``first/warm`` is the median over the rounds of one process's first call
  over its own warm passes.  ``floor f/w`` is the same for the floor (the
  pass that warms its caches over its warm ones): how much of a cold first
  call the I/O alone explains.
* **whole process**: ``pynuma topology --json --root DUMP`` from a regular
  (non-editable) install in a throwaway venv, against that venv's
  ``python -c pass`` and ``lstopo-no-graphics --of xml -i DUMP`` (Debian
  ``hwloc-nox``/``hwloc``) when installed.  ``floor cold`` is the floor's
  first pass (ms): the same I/O in C in a fresh process, a lower bound for
  any discovery's share of the whole process.

Every compared command runs in alternation, round after round; each figure
is the min and the median over the rounds (a round's in-process figure is
the mean of a batch of passes sized to ~20 ms).

    python3 bench/bench_discovery.py [--rounds 15] [--proc-rounds 21] [--only NAME] [--venv DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

FLOOR_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

static int have_openat2 = 1;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

static int open_in(int root, const char *path, int flags) {
#ifdef SYS_openat2
    if (have_openat2) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (unsigned long long)(flags | O_CLOEXEC);
        how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, root, path, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS) return (int)fd;
        have_openat2 = 0;
    }
#endif
    return openat(root, path, flags | O_CLOEXEC);
}

static int single_shot(const char *p) {
    static const char *const pre[] = {"sys/devices/", "sys/bus/", "sys/class/", "sys/kernel/mm/", NULL};
    for (const char *const *q = pre; *q; q++) if (strncmp(p, *q, strlen(*q)) == 0) return 1;
    return 0;
}

typedef struct { char kind; long limit; int ends; char *path; } entry;

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor ROOT LIST PASSES\n"); return 2; }
    int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) { perror(argv[1]); return 1; }
    FILE *lf = fopen(argv[2], "r");
    if (!lf) { perror(argv[2]); return 1; }
    size_t n = 0, cap = 1024; entry *e = malloc(cap * sizeof *e); char line[8192];
    while (fgets(line, sizeof line, lf)) {
        line[strcspn(line, "\n")] = 0;
        if (n == cap) e = realloc(e, (cap *= 2) * sizeof *e);
        char *sp = strchr(line + 2, ' ');
        e[n].kind = line[0];
        e[n].limit = strtol(line + 2, NULL, 10);
        e[n].path = strdup(sp + 1);
        e[n].ends = single_shot(e[n].path);
        n++;
    }
    fclose(lf);
    int passes = atoi(argv[3]);
    static char buf[1 << 16]; char *big = NULL; size_t bigcap = 0; long sink = 0;
    double start = now(), t0 = 0, first = 0;
    for (int r = -1; r < passes; r++) {  /* pass -1 warms the caches, as the discover side's first call */
        if (r == 0) { t0 = now(); first = t0 - start; }
        for (size_t i = 0; i < n; i++) {
            const char *p = e[i].path;
            if (e[i].kind == 'F') {
                int fd = open_in(root, p, O_RDONLY | O_NONBLOCK);
                if (fd < 0) continue;
                struct stat st;  /* only a regular file is read (pn_open_file: a dump may hold a FIFO or device) */
                if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { close(fd); continue; }
                size_t got = 0, step = 4096, limit = (size_t)e[i].limit;
                for (;;) {
                    size_t chunk = limit - got < step ? limit - got : step;
                    if (got + chunk > bigcap) { bigcap = (got + chunk) * 2; big = realloc(big, bigcap); }
                    ssize_t k = read(fd, big + got, chunk);
                    if (k <= 0) break;
                    got += (size_t)k;
                    if (got >= limit || (e[i].ends && (size_t)k < chunk && k % 4096)) break;
                    if ((size_t)k == chunk && step < 65536) step *= 2;
                }
                sink += (long)got;
                close(fd);
            } else if (e[i].kind == 'D') {
                int fd = open_in(root, p, O_RDONLY | O_DIRECTORY);
                if (fd < 0) continue;
                DIR *d = fdopendir(fd);
                if (!d) { close(fd); continue; }
                struct dirent *de;
                while ((de = readdir(d)) != NULL) sink += de->d_name[0];
                closedir(d);
            } else {
                int fd = open_in(root, p, O_RDONLY | O_PATH);
                struct stat st;
                if (fd < 0) continue;
                if (fstat(fd, &st) == 0) sink += S_ISDIR(st.st_mode);
                close(fd);
            }
        }
    }
    printf("%.3f %ld %d %.3f\n", (now() - t0) / passes, sink % 7, have_openat2, first);
    (void)buf;
    return 0;
}
"""

# a discovery process: "first" on start, then one batch of warm passes per request
WORKER = r"""
import sys, time
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])  # the source tree (no venv): else the installed package
root = sys.argv[2]
from pynuma.discover import discover
from pynuma import _impl
t0 = time.perf_counter(); discover(root); first = time.perf_counter() - t0
print(f"{first * 1e6:.3f} {int(_impl.native_in_use('fsread'))}", flush=True)
for line in sys.stdin:
    passes = int(line)
    t0 = time.perf_counter()
    for _ in range(passes):
        discover(root)
    print(f"{(time.perf_counter() - t0) / passes * 1e6:.3f}", flush=True)
"""

RECORD = r"""
import sys
sys.path.insert(0, sys.argv[1])
from bench.recording import RecordingFsRoot
from pynuma.discover import discover
with RecordingFsRoot(sys.argv[2]) as fs:
    discover(fs)
for kind, limit, path in fs.entries:
    print(kind, limit, path.lstrip("/") or ".")
"""


def conformance_topology() -> Path:
    env = os.environ.get("PYNUMA_CONFORMANCE_DIR")
    base = Path(env) if env else PROJECT.parent / "shared" / "conformance"
    return base / "topology"


def build_floor(work: Path) -> Path:
    src, exe = work / "floor.c", work / "floor"
    src.write_text(FLOOR_C)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def extract(case: Path, dest: Path) -> Path:
    with tarfile.open(case / f"{case.name}.tar.bz2") as tar:
        try:
            tar.extractall(dest, filter="tar")
        except TypeError:  # Python without extraction filters
            tar.extractall(dest)
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


def make_venv(path: Path) -> Path:
    """A throwaway venv with pynuma installed the regular way (``pip install .``, no editable hook)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    subprocess.run([str(path / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(PROJECT)],
                   check=True, env=dict(os.environ, PYNUMA_REQUIRE_NATIVE="1"))
    return path


def stats(values) -> str:
    return f"{min(values):9.1f} {statistics.median(values):9.1f}"


class Worker:
    """A discovery process: its first call on start, then batches of warm passes on request."""

    def __init__(self, root: Path, pure: bool, venv: "Path | None") -> None:
        env = dict(os.environ, PYNUMA_PURE="1" if pure else "0")
        python, source = (str(venv / "bin" / "python"), "") if venv else (sys.executable, str(PROJECT))
        self.proc = subprocess.Popen([python, "-c", WORKER, source, str(root)], env=env, cwd="/",
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        first, native = self.proc.stdout.readline().split()
        self.first, self.native = float(first), native == "1"

    def batch(self, passes: int) -> float:
        self.proc.stdin.write(f"{passes}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def in_process(floor: Path, root: Path, listing: Path, rounds: int, venv: "Path | None") -> dict:
    """Floor, native and pure warm per-pass times (us) over interleaved rounds, and the first calls.

    Every round starts each side afresh (the floor is a new process each
    round, so are the discovery workers): no side keeps one process's luck
    with memory placement for the whole run.
    """
    probe = float(subprocess.run([str(floor), str(root), str(listing), "3"], capture_output=True, text=True,
                                 check=True).stdout.split()[0])
    passes = max(3, int(20_000 / max(probe, 1.0)))  # a batch of ~20 ms on each side
    out = {"floor": [], "floor_first": [], "native": [], "pure": [], "first": [], "passes": passes, "native_in_use": True}
    for _ in range(rounds):
        res = subprocess.run([str(floor), str(root), str(listing), str(passes)], capture_output=True, text=True,
                             check=True).stdout.split()
        out["floor"].append(float(res[0]))
        out["floor_first"].append(float(res[3]))
        out["openat2"] = res[2] == "1"
        native = Worker(root, pure=False, venv=venv)
        out["first"].append(native.first)
        out["native_in_use"] = out["native_in_use"] and native.native
        out["native"].append(native.batch(passes))
        native.close()
        pure = Worker(root, pure=True, venv=venv)
        out["pure"].append(pure.batch(max(1, passes // 4)))
        pure.close()
    return out


def whole_processes(cmds: dict, rounds: int) -> dict:
    """Wall time (ms) of each command per round, the commands in alternation."""
    for cmd in cmds.values():
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm the page cache
    out = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, cmd in cmds.items():
            t0 = time.perf_counter()
            res = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            out[name].append((time.perf_counter() - t0) * 1e3)
            if res.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)}: exit {res.returncode}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15, help="interleaved in-process rounds")
    ap.add_argument("--proc-rounds", type=int, default=21, help="interleaved whole-process rounds")
    ap.add_argument("--only", action="append", help="just this case (repeatable)")
    ap.add_argument("--venv", type=Path, help="a venv with pynuma installed by 'pip install .' (default: made here)")
    ap.add_argument("--no-process", action="store_true", help="skip the whole-process comparison")
    args = ap.parse_args()

    corpus = conformance_topology()
    if not corpus.is_dir():
        print(f"no corpus at {corpus}")
        return 1
    cases = sorted(p for p in corpus.iterdir() if p.is_dir() and (not args.only or p.name in args.only))
    lstopo = shutil.which("lstopo-no-graphics")
    with tempfile.TemporaryDirectory(prefix="pynuma-bench-") as tmp:
        work = Path(tmp)
        floor = build_floor(work)
        venv = args.venv or (None if args.no_process else make_venv(work / "venv"))
        if venv is None:
            print("in process: from the source tree (--no-process without --venv)")
        if not args.no_process:
            print(f"whole processes: {venv}/bin/pynuma (pip install ., not editable)"
                  + ("" if lstopo else "; lstopo-no-graphics not installed (apt-get install hwloc-nox)"))
        print("in process: warm per-pass times, min and median over interleaved rounds (us); "
              "first: the first discover() in a fresh process\n")
        head = (f"{'case':32} {'cpus':>4} {'files':>5} {'floor min':>9} {'median':>9} {'native min':>10} "
                f"{'median':>9} {'ratio':>6} {'+us':>6} {'first/warm':>10} {'floor f/w':>9} {'pure/nat':>8}")
        print(head)
        print("-" * len(head))
        rows, proc_rows = [], []
        for case in cases:
            root = extract(case, work / case.name)
            listing = work / f"{case.name}.list"
            listing.write_text(subprocess.run([sys.executable, "-c", RECORD, str(PROJECT), str(root)],
                                              capture_output=True, text=True, check=True).stdout)
            entries = listing.read_text().splitlines()
            res = in_process(floor, root, listing, args.rounds, venv)
            if not res["native_in_use"]:
                print("note: the native core is not in use; the figures are the pure path's")
            cpus = _cpus(root)
            fmin, nmin = min(res["floor"]), min(res["native"])
            ratio = statistics.median(res["native"]) / statistics.median(res["floor"])
            extra = statistics.median(res["native"]) - statistics.median(res["floor"])
            # each process's first call over its own warm passes, then the median over the rounds
            first_ratio = statistics.median(f / w for f, w in zip(res["first"], res["native"]))
            # the same for the floor: how much of a cold first call the I/O alone explains
            floor_first_ratio = statistics.median(f / w for f, w in zip(res["floor_first"], res["floor"]))
            pure_ratio = statistics.median(res["pure"]) / statistics.median(res["native"])
            # each round's native batch over the floor run just before it: drift between rounds cancels
            paired = statistics.median(n / f for n, f in zip(res["native"], res["floor"]))
            rows.append((case.name, cpus, ratio, extra, first_ratio, paired))
            print(f"{case.name:32} {cpus:4} {sum(e[0] == 'F' for e in entries):5} {stats(res['floor'])} "
                  f"{nmin:10.1f} {statistics.median(res['native']):9.1f} {ratio:6.2f} {extra:6.0f} "
                  f"{first_ratio:10.2f} {floor_first_ratio:9.2f} {pure_ratio:8.2f}", flush=True)
            if not args.no_process:
                cmds = {"python": [str(venv / "bin" / "python"), "-c", "pass"],
                        "pynuma": [str(venv / "bin" / "pynuma"), "topology", "--json", "--root", str(root)]}
                if lstopo:
                    cmds["lstopo"] = [lstopo, "--of", "xml", "-i", str(root)]
                proc_rows.append((case.name, cpus, whole_processes(cmds, args.proc_rounds),
                                  statistics.median(res["floor_first"]) / 1e3))
            shutil.rmtree(work / case.name)
        print()
        big = [r for r in rows if r[1] >= 8]
        small = [r for r in rows if r[1] < 8]
        if big:
            worst = max(big, key=lambda r: r[2])
            met = sum(r[2] <= 1.5 for r in big)
            print(f"8+ CPUs: median native/floor {statistics.median(r[2] for r in big):.2f}, "
                  f"worst {worst[2]:.2f} ({worst[0]}), met on {met} of {len(big)}; target 1.5")
            print(f"  the same, each round's pair: median {statistics.median(r[5] for r in big):.2f}, "
                  f"worst {max(r[5] for r in big):.2f}, met on {sum(r[5] <= 1.5 for r in big)} of {len(big)}")
        if small:
            worst = max(small, key=lambda r: r[3])
            print(f"under 8 CPUs: worst native - floor {worst[3]:.0f} us ({worst[0]}), "
                  f"met on {sum(r[3] <= 50 for r in small)} of {len(small)}; target 50 us")
        worst = max(rows, key=lambda r: r[4])
        print(f"first call / warm: worst {worst[4]:.2f} ({worst[0]}), met on {sum(r[4] <= 2 for r in rows)} "
              f"of {len(rows)}; target 2")
        if proc_rows:
            print("\nwhole process, ms (min and median over interleaved rounds)")
            head = f"{'case':32} {'cpus':>4} {'python min':>10} {'median':>9} {'pynuma min':>10} {'median':>9} " \
                   f"{'-python':>8} {'floor cold':>10}" + (f" {'lstopo min':>10} {'median':>9}" if lstopo else "")
            print(head)
            print("-" * len(head))
            for name, cpus, t, floor_cold in proc_rows:
                over = statistics.median(t["pynuma"]) - statistics.median(t["python"])
                line = f"{name:32} {cpus:4} {min(t['python']):10.1f} {statistics.median(t['python']):9.1f} " \
                       f"{min(t['pynuma']):10.1f} {statistics.median(t['pynuma']):9.1f} {over:8.1f} {floor_cold:10.1f}"
                if lstopo:
                    line += f" {min(t['lstopo']):10.1f} {statistics.median(t['lstopo']):9.1f}"
                print(line)
            def over_python(r):
                return statistics.median(r[2]["pynuma"]) - statistics.median(r[2]["python"])

            worst = max(proc_rows, key=over_python)
            print(f"\npynuma topology --json minus python -c pass (medians): worst {over_python(worst):.1f} ms "
                  f"({worst[0]}), met on {sum(over_python(r) <= 15 for r in proc_rows)} of {len(proc_rows)}; "
                  f"target 15 ms")
            # the I/O alone, done by C in a process's first pass, is a lower bound for any discovery
            bound = [f"{r[0]} {r[3]:.1f} ms" for r in proc_rows if r[3] > 15]
            if bound:
                print(f"  the floor's cold pass alone (the same I/O in C) is over 15 ms on: {', '.join(bound)}")
            if lstopo:
                big = [r for r in proc_rows if r[1] >= 96]
                slower = [r[0] for r in big if statistics.median(r[2]["pynuma"]) >= statistics.median(r[2]["lstopo"])]
                print(f"96+ CPUs: pynuma faster than lstopo on {len(big) - len(slower)} of {len(big)}"
                      + (f" (slower: {', '.join(slower)})" if slower else ""))
    return 0


def _cpus(root: Path) -> int:
    """Possible CPUs of a dump (its cpu/possible, else its cpuN directories)."""
    sys_cpu = root / "sys/devices/system/cpu"
    try:
        from pynuma.cpuset import CPUSet

        return len(CPUSet.parse((sys_cpu / "possible").read_text()))
    except (OSError, ValueError):
        return sum(1 for p in sys_cpu.glob("cpu[0-9]*") if p.name[3:].isdigit())


if __name__ == "__main__":
    sys.exit(main())
