"""Ledger throughput and latency beside the same bookkeeping on a plain JSON file under an fcntl lock.

    python3 bench/bench_ledger.py [--seconds 2] [--rounds 3]

Both sides do the same work per change: take an exclusive lock, read the
whole state, run the same fit check, record the pod, write durably
(SQLite ``synchronous=FULL`` / JSON temp file + fsync + rename + directory
fsync), release the lock.  Neither writes kubelet checkpoint files (no CPU
or Memory Manager is configured), so this is the accounting alone.

* throughput: assume+bind pairs per second with 1, 4 and 16 writer
  processes; each writer keeps at most 8 pods of its own (it releases the
  oldest), so the node never fills up;
* latency: p99 of one ``fit`` + ``assume`` from a single writer;
* the first (cold) call of each side is reported separately.

Runs are interleaved (ledger, JSON, ledger, ...) and the ratio is taken per
round; the median over rounds is printed.  Ratios are what to compare: the
absolute numbers depend on the disk's fsync cost.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pynuma.ledger.errors import NotInLedger  # noqa: E402
from pynuma.ledger.fit import fit  # noqa: E402
from pynuma.ledger.node import NodeState, allocatable_units  # noqa: E402
from pynuma.policy.podrequests import request_units  # noqa: E402
from pynuma.ledger.store import Ledger  # noqa: E402
from pynuma.pod import Container, Pod  # noqa: E402
from pynuma.quantity import Quantity  # noqa: E402

ALLOCATABLE = {"cpu": "100000", "memory": "100000Gi", "pods": "100000"}
KEEP = 8


def make_pod(uid: str) -> Pod:
    req = {"cpu": Quantity.parse("100m"), "memory": Quantity.parse("64Mi")}
    return Pod(uid, uid=uid, containers=(Container("app", req, dict(req)),))


class JsonLedger:
    """The floor: the whole state in one JSON file, rewritten atomically under an flock."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        if not os.path.exists(path):
            self._write({"allocatable": allocatable_units(ALLOCATABLE), "pods": {}})

    def _read(self):
        with open(self.path) as f:
            return json.load(f)

    def _write(self, doc) -> None:
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        d = os.open(os.path.dirname(self.path), os.O_RDONLY)
        os.fsync(d)
        os.close(d)

    def _change(self, fn):
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        try:
            doc = self._read()
            out = fn(doc)
            self._write(doc)
            return out
        finally:
            fcntl.flock(self.lock, fcntl.LOCK_UN)

    def _node(self, doc) -> NodeState:
        requested = {}
        for p in doc["pods"].values():
            for k, v in p["requests"].items():
                requested[k] = requested.get(k, 0) + v
        return NodeState(doc["allocatable"], requested, len(doc["pods"]))

    def fit(self, pod):
        return fit(pod, self._node(self._read()))

    def assume(self, pod, ttl=None):
        def do(doc):
            r = fit(pod, self._node(doc))
            if not r.fits:
                raise RuntimeError(r.message)
            doc["pods"][pod.uid] = {"state": "assumed", "requests": request_units(pod), "at": time.time()}
        return self._change(do)

    def bind(self, uid):
        def do(doc):
            if uid not in doc["pods"]:
                raise NotInLedger(uid)
            doc["pods"][uid]["state"] = "bound"
        return self._change(do)

    def release(self, uid):
        return self._change(lambda doc: doc["pods"].pop(uid))


def open_side(kind: str, directory: str):
    if kind == "ledger":
        led = Ledger(os.path.join(directory, "ledger.db"))
        if led.config().allocatable is None:
            led.configure(ALLOCATABLE)
        return led
    return JsonLedger(os.path.join(directory, "ledger.json"))


def _writer(kind, directory, wid, seconds, barrier, results):
    side = open_side(kind, directory)
    barrier.wait()
    deadline = time.perf_counter() + seconds
    live, n = [], 0
    while time.perf_counter() < deadline:
        uid = f"{kind}-{wid}-{n}"
        side.assume(make_pod(uid))
        side.bind(uid)
        live.append(uid)
        n += 1
        if len(live) > KEEP:
            side.release(live.pop(0))
    results.put(n)


def throughput(kind: str, writers: int, seconds: float) -> float:
    directory = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    try:
        open_side(kind, directory)  # created once, outside the timing
        ctx = mp.get_context("fork")
        barrier, results = ctx.Barrier(writers + 1), ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(kind, directory, w, seconds, barrier, results))
                 for w in range(writers)]
        for p in procs:
            p.start()
        barrier.wait()
        total = sum(results.get(timeout=seconds + 120) for _ in procs)
        for p in procs:
            p.join()
        return total / seconds
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def latency(kind: str, ops: int):
    """(first call ms, p99 ms) of fit + assume from one writer."""
    directory = tempfile.mkdtemp(prefix=f"bench-{kind}-")
    try:
        t0 = time.perf_counter()
        side = open_side(kind, directory)
        side.fit(make_pod("cold"))
        side.assume(make_pod("cold"))
        cold = (time.perf_counter() - t0) * 1000
        samples, live = [], ["cold"]
        for i in range(ops):
            pod = make_pod(f"p{i}")
            t0 = time.perf_counter()
            side.fit(pod)
            side.assume(pod)
            samples.append((time.perf_counter() - t0) * 1000)
            live.append(pod.uid)
            if len(live) > KEEP:
                side.release(live.pop(0))
        samples.sort()
        return cold, samples[int(0.99 * (len(samples) - 1))]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="per throughput run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", type=int, default=300, help="latency samples per round")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs; temp dir {tempfile.gettempdir()}; {args.rounds} interleaved rounds")
    print(f"{'writers':>8} {'ledger/s':>10} {'json/s':>10} {'ledger:json':>12}")
    for writers in (1, 4, 16):
        ratios, led, js = [], [], []
        for _ in range(args.rounds):
            a = throughput("ledger", writers, args.seconds)
            b = throughput("json", writers, args.seconds)
            led.append(a)
            js.append(b)
            ratios.append(a / b)
        print(f"{writers:>8} {statistics.median(led):>10.0f} {statistics.median(js):>10.0f} "
              f"{statistics.median(ratios):>11.2f}x")
    lat = {"ledger": [], "json": []}
    for _ in range(args.rounds):
        for kind in ("ledger", "json"):
            lat[kind].append(latency(kind, args.ops))
    led_p99 = statistics.median(p for _, p in lat["ledger"])
    js_p99 = statistics.median(p for _, p in lat["json"])
    print(f"fit+assume p99: ledger {led_p99:.2f} ms, json {js_p99:.2f} ms, ratio {led_p99 / js_p99:.2f}x")
    print(f"first call (open + fit + assume): ledger {lat['ledger'][0][0]:.1f} ms, json {lat['json'][0][0]:.1f} ms")


if __name__ == "__main__":
    main()
