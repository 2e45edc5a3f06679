"""Processes of the ledger stress test: writers doing random assume/bind/forget/release, and a reader.

    python -m tests.stress.ledger_actors writer DB LOG SEED START_FILE
    python -m tests.stress.ledger_actors reader DB LOG START_FILE

Each actor imports what it needs, touches ``LOG.ready`` and waits for
``START_FILE`` to hold the deadline (epoch seconds), so a slow start on a
busy machine does not eat into the time under test.

A writer logs ``{"intent": ...}`` before each change and ``{"ack": ...}``
after the ledger returned, on an O_APPEND descriptor (a ``kill -9`` loses
nothing already written).  The reader checks the invariants with its own SQL
(not the library's queries) every time the ledger's generation moves, and
compares the checkpoint files with what the database says while holding the
ledger's lock; it writes one JSON line per violation.
"""
from __future__ import annotations

import fcntl
import json
import os
import random
import sqlite3
import sys
import time

GPU = "example.com/gpu"
CPUS = 32
GPUS = 4
NODE_MEMORY = 8 << 30
RESERVED = 512 << 20


def configure(db: str) -> None:
    """The node every actor works on: 32 CPUs, 2 NUMA nodes of 8Gi, 4 GPUs, 40 pods."""
    from pynuma.cpuset import CPUSet
    from pynuma.ledger.store import Ledger

    with Ledger(db) as led:
        led.configure({"cpu": str(CPUS), "memory": str(2 * NODE_MEMORY - RESERVED), "pods": "40"},
                      cpu_policy="static", cpus=CPUSet(range(CPUS)),
                      memory={"machine": [[0, NODE_MEMORY, []], [1, NODE_MEMORY, []]],
                              "reserved": {"0": {"memory": RESERVED}, "1": {}}},
                      devices=[{"resource": GPU, "id": f"gpu{i}", "numa": i % 2, "healthy": True}
                               for i in range(GPUS)])


def _log(fd: int, record: dict) -> None:
    os.write(fd, (json.dumps(record) + "\n").encode())


def _pod(uid: str, cpus: int, memory: int, gpus: int):
    from pynuma.pod import Container, Pod
    from pynuma.quantity import Quantity

    req = {"cpu": Quantity(cpus), "memory": Quantity(memory, "BinarySI")}
    if gpus:
        req[GPU] = Quantity(gpus)
    return Pod(uid, uid=uid, containers=(Container("app", req, dict(req)),))


def _placement(cpus: int, memory: int, gpus: int):
    """Decide inside the transaction from the current view: lowest free CPUs, a NUMA node with room, free GPUs."""
    from pynuma.cpuset import CPUSet
    from pynuma.ledger import checkpoints
    from pynuma.ledger.model import Placement
    from pynuma.policy.memorymanager.state import Block

    def decide(view):
        held = view.cpu_state().assigned()
        free = [c for c in range(CPUS) if c not in held][:cpus]
        ms = checkpoints.memory_state(view).machine_state
        node = max(ms, key=lambda n: ms[n].memory_map["memory"].free)
        taken = {i for d in view.device_allocations().values() for c in d.values() for i in c.get(GPU, ())}
        devs = [f"gpu{i}" for i in range(GPUS) if f"gpu{i}" not in taken][:gpus]
        return Placement({"app": CPUSet(free)}, {"app": [Block((node,), "memory", memory)]},
                         {"app": {GPU: devs}} if gpus else {})
    return decide


def wait_for_start(log: str, start_file: str) -> float:
    """Say we are ready, then wait for the driver's deadline."""
    with open(log + ".ready", "w"):
        pass
    while True:
        try:
            with open(start_file) as f:
                text = f.read()
            if text.endswith("\n"):
                return float(text)
        except FileNotFoundError:
            pass
        time.sleep(0.01)


def writer(db: str, log: str, seed: int, start_file: str) -> None:
    from pynuma.ledger.errors import ConflictError, FitError, NotInLedger
    from pynuma.ledger.store import Ledger
    from pynuma.ledger import checkpoints  # noqa: F401  (imported before the clock starts)

    deadline = wait_for_start(log, start_file)
    rng = random.Random(seed)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    mine = {}  # uid -> state
    n = 0
    with Ledger(db) as led:
        while time.time() < deadline:
            roll = rng.random()
            if not mine or (roll < 0.4 and len(mine) < 4):
                n += 1
                uid = f"w{seed}-{n}"
                cpus, memory, gpus = rng.choice((1, 2)), rng.choice((64, 128, 256, 512)) << 20, int(rng.random() < 0.2)
                bind = rng.random() < 0.5
                _log(fd, {"intent": "assume", "uid": uid, "bind": bind})
                try:
                    led.assume(_pod(uid, cpus, memory, gpus), placement=_placement(cpus, memory, gpus), bind=bind)
                except (FitError, ConflictError) as err:
                    _log(fd, {"refused": "assume", "uid": uid, "error": type(err).__name__})
                    continue
                mine[uid] = "bound" if bind else "assumed"
                _log(fd, {"ack": "assume", "uid": uid, "state": mine[uid]})
                continue
            uid = rng.choice(sorted(mine))
            op = rng.choice(("bind", "release", "forget") if mine[uid] == "assumed" else ("release",))
            _log(fd, {"intent": op, "uid": uid})
            try:
                getattr(led, op)(uid)
            except NotInLedger as err:
                _log(fd, {"error": op, "uid": uid, "message": str(err)})
                continue
            if op == "bind":
                mine[uid] = "bound"
            else:
                del mine[uid]
            _log(fd, {"ack": op, "uid": uid})
    os.close(fd)


# -- the independent reader -----------------------------------------------------------------------

def _violations(conn, db_dir: str, locked: bool):
    """Invariants from the database as written, with this reader's own SQL."""
    from pynuma.cpuset import CPUSet
    from pynuma.state import cpu_checkpoint, memory_checkpoint

    out = []
    config = json.loads(conn.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0])
    alloc = dict(config["allocatable"])
    alloc[GPU] = sum(1 for d in config["devices"] if d.get("healthy", True))
    total = {}
    pods = conn.execute("SELECT uid, requests FROM pods").fetchall()
    for _, req in pods:
        for k, v in json.loads(req).items():
            total[k] = total.get(k, 0) + v
    for k, v in total.items():
        if v > alloc.get(k, 0):
            out.append(f"requested {k} {v} > allocatable {alloc.get(k, 0)}")
    if len(pods) > alloc["pods"]:
        out.append(f"{len(pods)} pods > {alloc['pods']} allowed")
    for cpu, holders in conn.execute("SELECT cpu, COUNT(DISTINCT pod_uid) FROM cpus GROUP BY cpu HAVING COUNT(DISTINCT pod_uid) > 1"):
        out.append(f"CPU {cpu} held by {holders} pods")
    for dev, holders in conn.execute("SELECT device_id, COUNT(DISTINCT pod_uid) FROM devices GROUP BY resource, device_id "
                                     "HAVING COUNT(DISTINCT pod_uid) > 1"):
        out.append(f"device {dev} held by {holders} pods")
    if not locked:
        return out, None
    # files, compared while no writer can be between its commit and its file writes
    assigned = {}
    for cpu, uid, cont in conn.execute("SELECT cpu, pod_uid, container FROM cpus"):
        assigned.setdefault(uid, {}).setdefault(cont, set()).add(cpu)
    blocks = {}
    for uid, cont, size in conn.execute("SELECT pod_uid, container, size FROM memory"):
        blocks.setdefault(uid, {})[cont] = blocks.get(uid, {}).get(cont, 0) + size
    behind = []
    try:
        with open(os.path.join(db_dir, "cpu_manager_state")) as f:
            cpu = cpu_checkpoint.load(f.read(), configured_policy="static")
        with open(os.path.join(db_dir, "memory_manager_state")) as f:
            mem = memory_checkpoint.parse_checkpoint(f.read(), policy="Static")
    except Exception as err:  # half-written or corrupt: never acceptable
        out.append(f"checkpoint unreadable: {err}")
        return out, None
    want_cpu = {u: {c: CPUSet(s) for c, s in cs.items()} for u, cs in assigned.items()}
    if cpu.assignments != want_cpu or cpu.default != CPUSet(range(CPUS)) - CPUSet(
            set().union(*[s for cs in assigned.values() for s in cs.values()]) if assigned else set()):
        behind.append("cpu_manager_state")
    got_mem = {u: {c: sum(b.size for b in bl) for c, bl in cs.items()} for u, cs in (mem.state.assignments or {}).items()}
    if got_mem != blocks:
        behind.append("memory_manager_state")
    cpu_pods = {(u, c) for u, cs in cpu.assignments.items() for c in cs}
    mem_pods = {(u, c) for u, cs in (mem.state.assignments or {}).items() for c in cs}
    if not behind and cpu_pods != mem_pods:
        out.append(f"files name different pods: {sorted(cpu_pods ^ mem_pods)[:4]}")
    temps = [n for n in os.listdir(db_dir) if n.endswith(".tmp")]
    return out, (behind, temps)


def reader(db: str, log: str, start_file: str) -> None:
    from pynuma.state import cpu_checkpoint, memory_checkpoint  # noqa: F401  (imported before the clock starts)

    deadline = wait_for_start(log, start_file) + 0.5
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    lock = os.open(db + ".lock", os.O_RDWR)
    last = None
    checks = 0
    while time.time() < deadline:
        gen = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
        if gen == last:
            time.sleep(0.002)
            continue
        locked = checks % 4 == 0  # files every fourth step: the lock slows writers down
        if locked:
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            conn.execute("BEGIN")
            try:
                gen = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
                problems, files = _violations(conn, os.path.dirname(db), locked)
            finally:
                conn.execute("COMMIT")
        finally:
            if locked:
                fcntl.flock(lock, fcntl.LOCK_UN)
        last = gen
        checks += 1
        for p in problems:
            _log(fd, {"violation": p, "generation": gen})
        if files and (files[0] or files[1]):
            _log(fd, {"behind": files[0], "temps": files[1], "generation": gen})
    _log(fd, {"checks": checks})
    os.close(fd)


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "writer":
        writer(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif role == "reader":
        reader(sys.argv[2], sys.argv[3], sys.argv[4])
    elif role == "configure":
        configure(sys.argv[2])
