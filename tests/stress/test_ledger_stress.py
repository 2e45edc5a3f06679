"""16 writer processes against one ledger, an independent reader checking invariants, then the same with kill -9.

Budget: ``PYNUMA_STRESS_SECONDS`` (default 20) split between the two phases;
``PYNUMA_STRESS_SECONDS=120`` runs each phase for a minute.

After each phase: every acknowledged change is in the ledger (a writer killed
mid-change may or may not have made its last one), nothing is in the ledger
that no writer asked for, the reader saw no violation (requested within
allocatable, no CPU or device held twice, files never half-written and never
naming different pods), and once the next writer has run the checkpoint
files equal what the ledger derives and no temp file is left.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WRITERS = 16
BUDGET = float(os.environ.get("PYNUMA_STRESS_SECONDS", "20"))


def _spawn(*args):
    env = dict(os.environ, PYTHONPATH=PROJECT)
    return subprocess.Popen([sys.executable, "-m", "tests.stress.ledger_actors", *map(str, args)], cwd=PROJECT,
                            env=env, stderr=subprocess.PIPE)


def _records(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass  # a line cut by kill -9 was never acknowledged
    return out


def _expected(logs, killed):
    """uid -> set of acceptable states ("assumed", "bound", None = absent) from what the writers acknowledged."""
    expect = {}
    for log in logs:
        recs = _records(log)
        pending = None
        for r in recs:
            if "intent" in r:
                pending = r
            elif "ack" in r:
                pending = None
                if r["ack"] == "assume":
                    expect[r["uid"]] = {r["state"]}
                elif r["ack"] == "bind":
                    expect[r["uid"]] = {"bound"}
                else:
                    expect[r["uid"]] = {None}
            elif "refused" in r or "error" in r:
                pending = None
        if pending is not None and log in killed:
            # killed between its change and its acknowledgement: the change may or may not have committed
            uid, op = pending["uid"], pending["intent"]
            before = expect.get(uid, {None})
            after = {"assume": {"bound" if pending.get("bind") else "assumed"}, "bind": {"bound"}}.get(op, {None})
            expect[uid] = set(before) | after
    return expect


def _phase(tmp_path, seconds, kill):
    from tests.stress.ledger_actors import configure

    db = str(tmp_path / "pynuma-ledger.db")
    configure(db)
    start_file = str(tmp_path / "start")
    reader_log = str(tmp_path / "reader.log")
    reader = _spawn("reader", db, reader_log, start_file)
    procs, logs, killed = {}, [], set()
    seed = 0

    def start():
        nonlocal seed
        seed += 1
        log = str(tmp_path / f"writer-{seed}.log")
        logs.append(log)
        procs[log] = _spawn("writer", db, log, seed, start_file)

    for _ in range(WRITERS):
        start()
    # the clock starts once every actor has imported what it needs (a busy machine starts them slowly)
    limit = time.time() + 120
    while not all(os.path.exists(p + ".ready") for p in logs + [reader_log]):
        assert time.time() < limit, "actors did not start"
        time.sleep(0.05)
    deadline = time.time() + seconds
    with open(start_file + ".part", "w") as f:
        f.write(f"{deadline}\n")
    os.replace(start_file + ".part", start_file)
    rng = random.Random(42)
    kills = 0
    while time.time() < deadline:
        # kills come every 0.3-1.2 s: a restarted writer needs a moment to import before it works again
        time.sleep(rng.uniform(0.3, 1.2) if kill else rng.uniform(0.05, 0.4))
        if kill and time.time() < deadline - 0.5:
            log = rng.choice([k for k, p in procs.items() if p.poll() is None] or [None])
            if log is not None:
                procs[log].send_signal(signal.SIGKILL)
                procs[log].wait()
                killed.add(log)
                kills += 1
                start()
    for log, p in procs.items():
        _, err = p.communicate(timeout=120)
        assert log in killed or p.returncode == 0, err.decode()[-2000:]
    reader.communicate(timeout=120)
    assert reader.returncode == 0
    return db, logs, killed, reader_log, kills


def _verify(tmp_path, db, logs, killed, reader_log, kill):
    from pynuma.ledger import checkpoints
    from pynuma.ledger.store import Ledger

    recs = _records(reader_log)
    violations = [r for r in recs if "violation" in r]
    assert violations == []
    checks = [r["checks"] for r in recs if "checks" in r]
    assert checks and checks[0] > 3, "the reader hardly ran"
    behind = [r for r in recs if "behind" in r]
    if not kill:
        assert behind == [], behind[:3]  # with no kills, the files never lag the ledger under its lock
    acks = sum(1 for log in logs for r in _records(log) if "ack" in r)
    assert acks > 20, f"only {acks} changes acknowledged"
    # the next run: opening the ledger catches the files up and clears temps
    with Ledger(db) as led:
        view = led.snapshot()
        assert led.check_checkpoints() == []
        assert checkpoints.cross_check(*(open(os.path.join(str(tmp_path), n)).read() for n in checkpoints.FILES)) == []
    assert not [n for n in os.listdir(str(tmp_path)) if n.endswith(".tmp")]
    expect = _expected(logs, killed)
    have = {e.uid: e.state for e in view.entries}
    lost = {u: s for u, s in expect.items() if have.get(u) not in s}
    assert lost == {}, f"acknowledged changes missing: {list(lost.items())[:5]}"
    phantom = set(have) - set(expect)
    assert phantom == set(), f"pods in the ledger nobody committed: {sorted(phantom)[:5]}"
    return acks, len(behind)


@pytest.mark.parametrize("kill", [False, True], ids=["writers", "writers-killed"])
def test_ledger_under_16_writers(tmp_path, kill):
    db, logs, killed, reader_log, kills = _phase(tmp_path, BUDGET / 2, kill)
    acks, behind = _verify(tmp_path, db, logs, killed, reader_log, kill)
    if kill:
        assert kills > 0 and killed
    print(f"\n{'kill -9' if kill else 'no kills'}: {acks} acknowledged changes, {len(logs)} writers, "
          f"{kills} killed, files seen behind {behind} time(s)")
