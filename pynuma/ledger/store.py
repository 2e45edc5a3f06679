"""The node's ledger: every pod's reservation, kept in SQLite and shared by every process on the host.

    from pynuma import Ledger
    ledger = Ledger("/var/lib/pynuma/pynuma-ledger.db")
    ledger.configure(allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"})
    entry = ledger.assume(pod, ttl=30)     # FitError when it does not fit
    ledger.bind(pod.uid)                    # the bind was confirmed
    ledger.forget(pod.uid)                  # ... or it failed: roll the assumption back
    ledger.release(pod.uid)                 # the pod is gone
    ledger.expire()                         # drop assumptions whose ttl ran out

Each change is one SQLite transaction (WAL mode, ``synchronous=FULL``,
``BEGIN IMMEDIATE``): the fit check, the pod's entry and its exclusive CPUs,
memory blocks and devices commit together or not at all, and a commit that
returned survives ``kill -9`` and power loss.  Writers are serialized by a
lock file (see :mod:`.lock`), so two writers can never both take the same
capacity; a writer that decided from an older :meth:`Ledger.snapshot` and
passes its ``expect_generation`` gets :class:`ConflictError` instead of
committing a stale decision.  After each commit, while still holding the
lock, the kubelet checkpoint files in ``checkpoint_dir`` are regenerated
from the ledger (:mod:`.checkpoints`).

Thread-safe: one ``Ledger`` may be shared by threads (its operations run one
at a time); separate ``Ledger`` objects, in one process or many, coordinate
through the database and the lock file.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from typing import Dict, Iterator, List, Mapping, Optional, Union

from ..errors import CheckpointError, PynumaError
from ..pod import Pod
from ..quantity import Quantity
from . import checkpoints, sql
from .errors import ConflictError, FitError, LedgerBusy, NotInLedger
from .fit import FitOptions, FitResult, fit
from .lock import FileLock
from .model import Entry, LedgerView, NodeConfig, Placement
from ..policy.podrequests import from_units
from .transaction import PlacementFn, Transaction, _node_or_fail

DB_NAME = "pynuma-ledger.db"

__all__ = ["Ledger", "Transaction", "ConflictError", "FitError", "NotInLedger", "LedgerBusy", "Entry", "Placement",
           "PlacementFn", "LedgerView", "NodeConfig", "DB_NAME"]


class Ledger:
    """Pods' reservations on this node; see the module docstring.  ``path`` is the SQLite file."""

    def __init__(self, path: str, *, checkpoint_dir: Optional[str] = None, timeout: float = 60.0,
                 fit_options: FitOptions = FitOptions(), repair: bool = True) -> None:
        self.path = os.path.abspath(path)
        self.checkpoint_dir = os.path.abspath(checkpoint_dir) if checkpoint_dir else os.path.dirname(self.path)
        self.fit_options = fit_options
        self._mutex = threading.RLock()
        self._lock = FileLock(self.path + ".lock", timeout)
        self._lock._open()  # an unwritable directory fails here, with the OS's reason and the path
        self._conn = None
        try:
            try:
                self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None,
                                             check_same_thread=False)
                sql.prepare(self._conn)
            except sqlite3.DatabaseError as err:
                raise CheckpointError(f"{self.path}: {err}") from None
            # files a writer killed between its commit and its file writes left behind, rewritten on open
            # (``repair=False``: left for :meth:`check_checkpoints` to report)
            self.synced_on_open: List[str] = []
            if repair or not self._run(sql.is_created):
                # a reader (``repair=False``) of a ledger that exists takes no lock: it never waits for a writer
                with self._mutex, self._lock:
                    self._run(sql.create)
                    if repair:
                        self.synced_on_open = checkpoints.sync(self.checkpoint_dir,
                                                               checkpoints.derive(self._read()))
        except BaseException:
            # a ledger that failed to open holds nothing: its connection and lock file close here
            if self._conn is not None:
                self._conn.close()
            self._lock.close()
            raise

    # -- plumbing ------------------------------------------------------------------------------------
    def _run(self, fn, *args):
        try:
            return fn(self._conn, *args)
        except sqlite3.IntegrityError:
            raise  # the schema's exclusivity guard: the transaction tells its writer
        except sqlite3.OperationalError as err:
            raise PynumaError(f"{self.path}: {err}") from None
        except (sqlite3.DatabaseError, sql.LedgerDamaged) as err:  # not a ledger, a newer one, or damaged
            raise CheckpointError(f"{self.path}: {err}") from None

    def _read(self) -> LedgerView:
        return self._run(sql.read_view)

    @contextmanager
    def transaction(self) -> Iterator["Transaction"]:
        """Several changes as one: they all commit at the end of the ``with`` block, or none does.

        The lock is held for the whole block, so decisions made from
        ``tx.view`` inside it cannot go stale.  On commit the checkpoint files
        are regenerated, still under the lock.
        """
        with self._mutex, self._lock:
            self._run(lambda c: c.execute("BEGIN IMMEDIATE"))
            tx = Transaction(self)
            try:
                yield tx
                # the final state, for the files (only read again when there are files to derive)
                view = tx.view if checkpoints.has_files(tx.config) else None
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as err:
                self._conn.execute("ROLLBACK")
                raise PynumaError(f"{self.path}: commit failed: {err}") from None
            # also when nothing changed: files a killed writer left behind are caught up by the next one
            checkpoints.sync(self.checkpoint_dir, checkpoints.derive(view) if view is not None else {})

    def close(self) -> None:
        with self._mutex:
            self._conn.close()
            self._lock.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reads ---------------------------------------------------------------------------------------
    def snapshot(self) -> LedgerView:
        """A consistent view of the whole ledger at its current ``generation``."""
        with self._mutex:
            self._run(lambda c: c.execute("BEGIN"))
            try:
                return self._read()
            finally:
                self._conn.execute("COMMIT")

    def entries(self) -> List[Entry]:
        """Every pod in the ledger, assumed and bound, oldest first."""
        return list(self.snapshot().entries)

    def get(self, uid: str) -> Optional[Entry]:
        return self.snapshot().entry(uid)

    def requested(self) -> Dict[str, Quantity]:
        """What the ledger's pods request in total (cpu in cores, memory and hugepages in bytes, ...)."""
        return from_units(self.snapshot().requested())

    def config(self) -> NodeConfig:
        return self.snapshot().config

    def fit(self, pod: Pod, options: Optional[FitOptions] = None) -> FitResult:
        """Would ``pod`` fit what the node has left now (nothing is reserved)."""
        view = self.snapshot()
        return fit(pod, _node_or_fail(view), options or self.fit_options)

    # -- writes (each one transaction) ------------------------------------------------------------------
    def configure(self, allocatable: Optional[Mapping[str, Union[Quantity, str, int]]] = None, **changes) -> NodeConfig:
        """Set node allocatable and/or other :class:`NodeConfig` fields; the files are rewritten to match."""
        with self.transaction() as tx:
            return tx.configure(allocatable, **changes)

    def assume(self, pod: Pod, ttl: Optional[float] = None, **kw) -> Entry:
        """Reserve ``pod`` if it fits; see :meth:`Transaction.assume`."""
        with self.transaction() as tx:
            return tx.assume(pod, ttl, **kw)

    def bind(self, uid: str, now: Optional[float] = None) -> Entry:
        """Confirm an assumed pod (idempotent for a bound one)."""
        with self.transaction() as tx:
            return tx.bind(uid, now)

    def forget(self, uid: str) -> Entry:
        """Roll back an assumption whose bind failed (a bound pod must be released instead)."""
        with self.transaction() as tx:
            return tx.forget(uid)

    def release(self, uid: str) -> Entry:
        """Remove a pod (assumed or bound) and everything it holds."""
        with self.transaction() as tx:
            return tx.release(uid)

    def expire(self, now: Optional[float] = None) -> List[Entry]:
        """Remove assumed pods whose deadline has passed; the entries removed."""
        with self.transaction() as tx:
            return tx.expire(now)

    # -- checkpoint files --------------------------------------------------------------------------------
    def checkpoint_texts(self) -> Dict[str, str]:
        """File name -> what the checkpoint file must hold for the ledger as it is now."""
        return checkpoints.derive(self.snapshot())

    def check_checkpoints(self) -> List["checkpoints.Finding"]:
        """How the files in ``checkpoint_dir`` differ from the ledger (nothing is written)."""
        with self._mutex, self._lock:
            return checkpoints.check(self.checkpoint_dir, checkpoints.derive(self._read()))

    def sync_checkpoints(self) -> List[str]:
        """Rewrite files that are behind the ledger and remove stale temps; the names rewritten."""
        with self._mutex, self._lock:
            return checkpoints.sync(self.checkpoint_dir, checkpoints.derive(self._read()))
