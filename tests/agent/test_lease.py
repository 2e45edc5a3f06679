"""The Lease: its object, liveness from the Lease alone, and leader election between processes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pynuma.agent.election import LeaseLock
from pynuma.agent.lease import Lease

PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A candidate: tries every RENEW seconds for RUN seconds, logs each lease it holds as one JSON line.
CANDIDATE = r"""
import json, sys, time
from pynuma.agent.election import LeaseLock
path, ident, duration, renew, run, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), \
    float(sys.argv[5]), sys.argv[6]
lock = LeaseLock(path, "node", duration)
end = time.time() + run
with open(log, "a", buffering=1) as out:
    while time.time() < end:
        lease = lock.try_acquire_or_renew(ident)
        if lease is not None:
            out.write(json.dumps({"id": ident, "acquire": lease.acquire_time, "renew": lease.renew_time,
                                  "transitions": lease.lease_transitions}) + "\n")
        time.sleep(renew)
"""


def test_lease_object_round_trip_and_liveness():
    lease = Lease("n1", "n1", 40, 1000.25, 1010.5, 3)
    back = Lease.from_k8s(lease.to_k8s())
    assert back == lease
    assert lease.alive(1049.0) and not lease.alive(1050.5)
    assert not Lease("n1").alive(0.0)  # never renewed: not alive
    with pytest.raises(ValueError):
        Lease.from_k8s({"kind": "Lease", "spec": {"leaseDurationSeconds": "40"}})


def test_lease_object_validates():
    validate = pytest.importorskip("pynuma.export.validate")
    pytest.importorskip("kubernetes_validate")
    assert validate.k8s_errors(Lease("n1", "n1", 40, 1000.0, 1010.0, 0).to_k8s()) == []


def test_acquire_renew_refuse_take_over_release(tmp_path):
    lock = LeaseLock(str(tmp_path / "lease.json"), "node", duration_s=10)
    a = lock.try_acquire_or_renew("a", now=100.0)
    assert (a.holder_identity, a.acquire_time, a.lease_transitions) == ("a", 100.0, 0)
    assert lock.try_acquire_or_renew("b", now=109.9) is None          # held and not expired
    renewed = lock.try_acquire_or_renew("a", now=105.0)
    assert (renewed.acquire_time, renewed.renew_time) == (100.0, 105.0)
    assert lock.try_acquire_or_renew("b", now=114.9) is None          # renewal moved the expiry
    b = lock.try_acquire_or_renew("b", now=115.0)                    # expired: taken over
    assert (b.holder_identity, b.acquire_time, b.lease_transitions) == ("b", 115.0, 1)
    assert not lock.release("a", now=116.0)                          # not a's to give
    assert lock.release("b", now=116.0)
    c = lock.try_acquire_or_renew("c", now=116.5)                    # free at once after a release
    assert c.holder_identity == "c" and c.lease_transitions == 1


def test_a_torn_record_counts_as_free(tmp_path):
    path = tmp_path / "lease.json"
    path.write_text("{not json")
    assert LeaseLock(str(path), "node", 5).try_acquire_or_renew("a", now=1.0).holder_identity == "a"


def _terms(lines):
    """Per holder term: (identity, first held, last renew) from the candidates' logs, in time order."""
    terms = []
    for rec in sorted(lines, key=lambda r: r["renew"]):
        if terms and terms[-1][0] == rec["id"] and terms[-1][1] == rec["acquire"]:
            terms[-1][2] = rec["renew"]
        else:
            terms.append([rec["id"], rec["acquire"], rec["renew"]])
    return terms


def test_processes_elect_one_holder_and_a_standby_takes_over_after_kill_9(tmp_path):
    duration, renew = 1, 0.05
    path, log = str(tmp_path / "lease.json"), str(tmp_path / "log.jsonl")
    env = dict(os.environ, PYTHONPATH=PROJECT)
    procs = {ident: subprocess.Popen([sys.executable, "-c", CANDIDATE, path, ident, str(duration), str(renew),
                                      "8", log], env=env)
             for ident in ("a", "b", "c")}
    try:
        deadline = time.time() + 10
        holder = None
        while holder is None and time.time() < deadline:
            time.sleep(0.1)
            current = LeaseLock(path, "node", duration).get()
            if current is not None and current.alive(time.time()):
                holder = current.holder_identity
        assert holder in procs
        time.sleep(0.5)
        killed_at = time.time()
        procs[holder].send_signal(signal.SIGKILL)
        procs[holder].wait()
        stale = LeaseLock(path, "node", duration).get()
        # the reader's rule: the killed holder's lease is gone within leaseDurationSeconds
        if stale.holder_identity == holder:
            assert stale.expires_at <= killed_at + duration
        time.sleep(duration + 1.0)
        after = LeaseLock(path, "node", duration).get()
        assert after.alive(time.time()) and after.holder_identity not in (holder, None)
        assert after.lease_transitions >= 1
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    with open(log) as f:
        terms = _terms([json.loads(line) for line in f])
    assert len({t[0] for t in terms}) >= 2
    # never two holders: each term's holder believes it holds until its last renew + duration,
    # and the next term starts no earlier than that
    for (_, _, last_renew), (_, next_start, _) in zip(terms, terms[1:]):
        assert next_start >= last_renew + duration
