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

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Union

from ..errors import CheckpointError, InputError, PynumaError
from ..pod import Pod
from ..quantity import Quantity
from . import checkpoints, sql
from .errors import ConflictError, FitError, LedgerBusy, NotInLedger
from .fit import FitOptions, FitResult, fit, remove_missing_extended_resources
from .lock import FileLock
from .model import ASSUMED, BOUND, Entry, LedgerView, NodeConfig, Placement
from .node import allocatable_units
from .requests import from_units, request_units

DB_NAME = "pynuma-ledger.db"
PlacementFn = Callable[[LedgerView], Placement]

__all__ = ["Ledger", "ConflictError", "FitError", "NotInLedger", "LedgerBusy", "Entry", "Placement", "LedgerView",
           "NodeConfig", "DB_NAME"]


class Ledger:
    """Pods' reservations on this node; see the module docstring.  ``path`` is the SQLite file."""

    def __init__(self, path: str, *, checkpoint_dir: Optional[str] = None, timeout: float = 60.0,
                 fit_options: FitOptions = FitOptions()) -> None:
        self.path = os.path.abspath(path)
        self.checkpoint_dir = os.path.abspath(checkpoint_dir) if checkpoint_dir else os.path.dirname(self.path)
        self.fit_options = fit_options
        self._mutex = threading.RLock()
        self._lock = FileLock(self.path + ".lock", timeout)
        self._lock._open()  # an unwritable directory fails here, with the OS's reason and the path
        try:
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            sql.prepare(self._conn)
        except sqlite3.DatabaseError as err:
            self._lock.close()
            raise CheckpointError(f"{self.path}: {err}") from None
        self.synced_on_open: List[str] = []
        with self._mutex, self._lock:
            self._run(sql.create)
            self.synced_on_open = checkpoints.sync(self.checkpoint_dir, checkpoints.derive(self._read()))

    # -- plumbing ------------------------------------------------------------------------------------
    def _run(self, fn, *args):
        try:
            return fn(self._conn, *args)
        except sqlite3.OperationalError as err:
            raise PynumaError(f"{self.path}: {err}") from None

    def _read(self) -> LedgerView:
        return self._run(sql.read_view)

    @contextmanager
    def _writing(self) -> Iterator[LedgerView]:
        """One write transaction under the lock; on commit the checkpoint files follow."""
        with self._mutex, self._lock:
            self._run(lambda c: c.execute("BEGIN IMMEDIATE"))
            try:
                yield self._read()
                view = self._read()
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._run(lambda c: c.execute("COMMIT"))
            checkpoints.sync(self.checkpoint_dir, checkpoints.derive(view))

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

    # -- writes ----------------------------------------------------------------------------------------
    def configure(self, allocatable: Optional[Mapping[str, Union[Quantity, str, int]]] = None, **changes) -> NodeConfig:
        """Set node allocatable and/or other :class:`NodeConfig` fields; the files are rewritten to match."""
        with self._writing() as view:
            fields = view.config.to_json()
            if allocatable is not None:
                fields["allocatable"] = allocatable_units(allocatable)
            for name, value in changes.items():
                if name not in fields:
                    raise InputError(f"unknown ledger setting {name!r}")
                fields[name] = value if name != "cpus" or value is None else str(value)
            new = NodeConfig.from_json(fields)
            _check_config(view, new)
            self._run(sql.write_config, new)
            return new

    def assume(self, pod: Pod, ttl: Optional[float] = None, *, placement: Union[Placement, PlacementFn, None] = None,
               expect_generation: Optional[int] = None, bind: bool = False, now: Optional[float] = None,
               options: Optional[FitOptions] = None) -> Entry:
        """Reserve ``pod``'s requests (and its placement) if it fits; one transaction.

        ``ttl``: seconds until an unconfirmed assumption may be expired
        (``None``: never).  ``placement``: the exclusive CPUs / memory /
        devices it takes, or a function of the current :class:`LedgerView`
        that decides them inside the transaction.  ``bind``: record it bound
        at once (the kubelet's admission).  Raises :class:`FitError` when it
        does not fit, :class:`ConflictError` when the pod is already in the
        ledger, the placement is taken, or the ledger moved past
        ``expect_generation``.
        """
        if not pod.uid:
            raise InputError(f"pod {pod.name}: a pod needs a uid to enter the ledger")
        now = time.time() if now is None else now
        with self._writing() as view:
            if expect_generation is not None and view.generation != expect_generation:
                raise ConflictError(f"ledger moved from generation {expect_generation} to {view.generation} "
                                    f"since the writer's view: re-read and retry")
            held = view.entry(pod.uid)
            if held is not None:
                raise ConflictError(f"pod {pod.uid} ({held.namespace}/{held.name}) is already {held.state} "
                                    f"in the ledger")
            node = _node_or_fail(view)
            result = fit(pod, node, options or self.fit_options)
            if not result.fits:
                raise FitError(f"pod {pod.namespace}/{pod.name} does not fit: {result.reason}: {result.message}",
                               result)
            plc = placement(view) if callable(placement) else (placement or Placement())
            _check_placement(view, pod.uid, plc)
            requests = request_units(remove_missing_extended_resources(pod, node),
                                     (options or self.fit_options).pod_level_resources)
            deadline = None if bind or ttl is None else now + ttl
            entry = Entry(pod.uid, pod.name, pod.namespace, BOUND if bind else ASSUMED, requests, now, deadline,
                          now if bind else None, view.generation + 1, plc)
            self._run(sql.insert_entry, entry)
            return entry

    def bind(self, uid: str, now: Optional[float] = None) -> Entry:
        """Confirm an assumed pod (idempotent for a bound one)."""
        now = time.time() if now is None else now
        with self._writing() as view:
            entry = _entry_or_fail(view, uid)
            if entry.state == BOUND:
                return entry
            self._run(sql.set_bound, uid, now, view.generation + 1)
            return sql.replace_entry(entry, state=BOUND, deadline=None, bound_at=now, generation=view.generation + 1)

    def forget(self, uid: str) -> Entry:
        """Roll back an assumption whose bind failed (a bound pod must be released instead)."""
        with self._writing() as view:
            entry = _entry_or_fail(view, uid)
            if entry.state != ASSUMED:
                raise NotInLedger(f"pod {uid} is bound, not assumed: release it instead of forgetting it")
            self._run(sql.delete_entries, [uid], view.generation + 1)
            return entry

    def release(self, uid: str) -> Entry:
        """Remove a pod (assumed or bound) and everything it holds."""
        with self._writing() as view:
            entry = _entry_or_fail(view, uid)
            self._run(sql.delete_entries, [uid], view.generation + 1)
            return entry

    def expire(self, now: Optional[float] = None) -> List[Entry]:
        """Remove assumed pods whose deadline has passed; the entries removed."""
        now = time.time() if now is None else now
        with self._writing() as view:
            gone = [e for e in view.entries if e.state == ASSUMED and e.deadline is not None and e.deadline <= now]
            if gone:
                self._run(sql.delete_entries, [e.uid for e in gone], view.generation + 1)
            return gone

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


def _node_or_fail(view: LedgerView):
    node = view.node_state()
    if not node.exists:
        raise InputError("the ledger has no node allocatable yet: set it (Ledger.configure / pynuma ledger init)")
    return node


def _entry_or_fail(view: LedgerView, uid: str) -> Entry:
    entry = view.entry(uid)
    if entry is None:
        raise NotInLedger(f"pod {uid} is not in the ledger")
    return entry


def _check_placement(view: LedgerView, uid: str, plc: Placement) -> None:
    """Every exclusive CPU and device of ``plc`` must exist and be free; ``ConflictError`` names the holder."""
    cpu_holder = {cpu: (e.uid, c) for e in view.entries for c, s in e.placement.cpus.items() for cpu in s}
    known = view.config.cpus
    for container, cpus in plc.cpus.items():
        if known is not None and not cpus <= known:
            raise InputError(f"pod {uid} container {container}: CPUs {cpus - known} are not among the node's {known}")
        for cpu in cpus:
            if cpu in cpu_holder:
                raise ConflictError(f"CPU {cpu} is already held by pod {cpu_holder[cpu][0]} "
                                    f"container {cpu_holder[cpu][1]}")
    dev_holder = {(r, i): e.uid for e in view.entries for d in e.placement.devices.values()
                  for r, ids in d.items() for i in ids}
    inventory = {(d["resource"], str(d["id"])) for d in view.config.devices}
    for container, devs in plc.devices.items():
        for res, ids in devs.items():
            for i in ids:
                if inventory and (res, i) not in inventory:
                    raise InputError(f"pod {uid} container {container}: no device {i} of {res} on this node")
                if (res, i) in dev_holder:
                    raise ConflictError(f"device {i} of {res} is already held by pod {dev_holder[(res, i)]}")
    if plc.memory and view.config.memory:
        trial = LedgerView(view.generation, view.config, view.entries + (
            Entry(uid, "", "", ASSUMED, {}, 0.0, None, None, 0, Placement(memory=plc.memory)),))
        problem = checkpoints.memory_overcommit(trial)
        if problem:
            raise ConflictError(f"pod {uid}: {problem}")


def _check_config(view: LedgerView, new: NodeConfig) -> None:
    if new.cpus is not None:
        held = view.cpu_state().assigned()
        if not held <= new.cpus:
            raise ConflictError(f"CPUs {held - new.cpus} are held by pods but not in the new CPU set {new.cpus}")
    json.dumps(new.to_json())  # a setting must survive the round trip through the database
