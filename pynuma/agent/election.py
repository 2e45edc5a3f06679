"""``LeaseLock``: one Lease shared by processes on one host, for heartbeats and leader election.

>>> lock = LeaseLock("/var/lib/pynuma/lease-node1.json", "node1", duration_s=40)   # doctest: +SKIP
>>> lease = lock.try_acquire_or_renew("replica-a")                               # doctest: +SKIP
>>> lease is not None                # this process holds it until lease.expires_at

The rules are client-go's ``leaderelection``: acquire a lease that is free
or expired (``renewTime + leaseDurationSeconds`` past), renew it while held,
never take one another holder renewed within its duration.  Every
read-modify-write happens under an ``fcntl`` lock on a side file, and the
record is replaced atomically, so two processes never both see themselves
as holder; the lock goes with its process, so a holder killed with
``kill -9`` blocks nobody and its lease simply expires.  Times are the
host's wall clock, shared by every process on it.  Without a path the
record lives in memory (one process, no election).
"""
from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from contextlib import contextmanager
from typing import Iterator, Optional

from ..errors import PynumaError
from .lease import NODE_LEASE_NAMESPACE, Lease


class LeaseLock:
    """A Lease record at ``path`` (JSON Lease object) guarded by ``path + ".lock"``."""

    def __init__(self, path: Optional[str], name: str, duration_s: int = 40,
                 namespace: str = NODE_LEASE_NAMESPACE) -> None:
        self.path = path
        self.name, self.duration_s, self.namespace = name, int(duration_s), namespace
        self._memory: Optional[Lease] = None
        self._mutex = threading.Lock()  # threads of one process; fcntl locks are per process

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex:
            if self.path is None:
                yield
                return
            # opened per operation: an idle agent keeps no descriptor, a killed one leaves no lock behind
            fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing drops the flock

    def _read(self) -> Optional[Lease]:
        if self.path is None:
            return self._memory
        try:
            with open(self.path, encoding="utf-8") as f:
                return Lease.from_k8s(json.load(f))
        except FileNotFoundError:
            return None
        except ValueError:
            return None  # a torn or foreign record is as good as none: the next write replaces it
        except OSError as err:
            raise PynumaError(f"{self.path}: {err.strerror or err}") from None

    def _write(self, lease: Lease) -> Lease:
        # what is returned is what a reader parses back (times at the MicroTime's microsecond)
        stored = Lease.from_k8s(lease.to_k8s())
        if self.path is None:
            self._memory = stored
            return stored
        from ..state.atomic import write_atomic

        write_atomic(self.path, json.dumps(lease.to_k8s(), sort_keys=True))
        return stored

    def get(self) -> Optional[Lease]:
        """The current record (``None`` before anyone took it)."""
        with self._locked():
            return self._read()

    def try_acquire_or_renew(self, identity: str, now: Optional[float] = None) -> Optional[Lease]:
        """Renew the lease held by ``identity`` or take a free/expired one; ``None`` when another holds it."""
        with self._locked():
            t = time.time() if now is None else now
            current = self._read()
            if current is not None and current.alive(t) and current.holder_identity != identity:
                return None
            if current is not None and current.holder_identity == identity and current.alive(t):
                lease = Lease(self.name, identity, self.duration_s, current.acquire_time, t,
                              current.lease_transitions, self.namespace)
            else:
                transitions = 0 if current is None else current.lease_transitions
                if current is not None and current.holder_identity and current.holder_identity != identity:
                    transitions += 1
                lease = Lease(self.name, identity, self.duration_s, t, t, transitions, self.namespace)
            return self._write(lease)

    def release(self, identity: str, now: Optional[float] = None) -> bool:
        """Give the lease up at once if ``identity`` holds it (client-go's ReleaseOnCancel); whether it did."""
        with self._locked():
            t = time.time() if now is None else now
            current = self._read()
            if current is None or not current.held_by(identity, t):
                return False
            # client-go writes an empty holder and a 1 s duration; a past renewTime makes it free at once
            self._write(Lease(self.name, None, self.duration_s, None, None, current.lease_transitions,
                              self.namespace))
            return True
