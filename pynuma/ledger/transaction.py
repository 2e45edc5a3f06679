"""The changes of one ledger transaction: assume, bind, forget, release, expire, configure.

Used through :meth:`pynuma.ledger.store.Ledger.transaction` (or the
one-change wrappers on :class:`~pynuma.ledger.store.Ledger`); every method
reads the ledger as the transaction has changed it so far.
"""
from __future__ import annotations

import json
import sqlite3
import time
from typing import Callable, List, Mapping, Optional, Union

from ..errors import InputError
from ..pod import Pod
from ..quantity import Quantity
from . import checkpoints, sql, stored
from .errors import ConflictError, FitError, NotInLedger
from .fit import FitOptions, fit, remove_missing_extended_resources
from .model import ASSUMED, BOUND, Entry, LedgerView, NodeConfig, Placement
from .node import allocatable_units
from ..policy.podrequests import request_units

PlacementFn = Callable[[LedgerView], Placement]


class Transaction:
    """The changes of one :meth:`Ledger.transaction`; ``view`` always reflects them so far."""

    def __init__(self, ledger) -> None:
        self._ledger = ledger
        self._view: Optional[LedgerView] = None  # read again only after a change
        self._config: Optional[NodeConfig] = None
        self.changed = False

    @property
    def config(self) -> NodeConfig:
        """The node configuration as this transaction leaves it (no re-read after pod changes)."""
        if self._config is None:
            self._config = self.view.config
        return self._config

    @property
    def view(self) -> LedgerView:
        if self._view is None:
            self._view = self._ledger._read()
            self._config = self._view.config
        return self._view

    def _generation(self) -> int:
        """The generation the next change writes (the view is stale after it)."""
        gen = self.view.generation + 1
        self.changed = True
        self._view = None
        return gen

    def configure(self, allocatable: Optional[Mapping[str, Union[Quantity, str, int]]] = None, **changes) -> NodeConfig:
        view = self.view
        fields = view.config.to_json()
        if allocatable is not None:
            fields["allocatable"] = allocatable_units(allocatable)
        for name, value in changes.items():
            if name not in fields:
                raise InputError(f"unknown ledger setting {name!r}")
            fields[name] = value if name != "cpus" or value is None else str(value)
        try:
            new = stored.node_config(fields)  # what a later read will check, refused before it is written
        except stored.Damaged as err:
            raise InputError(f"ledger configuration: {err}") from None
        _check_config(view, new)
        self._generation()
        self._ledger._run(sql.write_config, new)
        self._config = new
        return new

    def assume(self, pod: Pod, ttl: Optional[float] = None, *, placement: Union[Placement, PlacementFn, None] = None,
               expect_generation: Optional[int] = None, bind: bool = False, now: Optional[float] = None,
               options: Optional[FitOptions] = None, check_fit: bool = True) -> Entry:
        """Reserve ``pod``'s requests (and its placement) if it fits.

        ``ttl``: seconds until an unconfirmed assumption may be expired
        (``None``: never).  ``placement``: the exclusive CPUs / memory /
        devices it takes, or a function of the current :class:`LedgerView`
        that decides them inside the transaction.  ``bind``: record it bound
        at once (the kubelet's admission).  ``check_fit=False`` records a pod
        already running (imported from checkpoint files) without judging it.
        Raises :class:`FitError` when it does not fit, :class:`ConflictError`
        when the pod is already in the ledger, the placement is taken, or the
        ledger moved past ``expect_generation``.
        """
        if not pod.uid:
            raise InputError(f"pod {pod.name}: a pod needs a uid to enter the ledger")
        now = time.time() if now is None else now
        options = options or self._ledger.fit_options
        view = self.view
        if expect_generation is not None and view.generation != expect_generation:
            raise ConflictError(f"ledger moved from generation {expect_generation} to {view.generation} "
                                f"since the writer's view: re-read and retry")
        held = view.entry(pod.uid)
        if held is not None:
            raise ConflictError(f"pod {pod.uid} ({held.namespace}/{held.name}) is already {held.state} in the ledger")
        node = _node_or_fail(view) if check_fit else view.node_state()
        if check_fit:
            result = fit(pod, node, options)
            if not result.fits:
                raise FitError(f"pod {pod.namespace}/{pod.name} does not fit: {result.reason}: {result.message}",
                               result)
        plc = placement(view) if callable(placement) else (placement or Placement())
        _check_placement(view, pod.uid, plc)
        requests = request_units(remove_missing_extended_resources(pod, node), options.pod_level_resources)
        entry = Entry(pod.uid, pod.name, pod.namespace, BOUND if bind else ASSUMED, requests, now,
                      None if bind or ttl is None else now + ttl, now if bind else None, self._generation(), plc)
        try:
            self._ledger._run(sql.insert_entry, entry)
        except sqlite3.IntegrityError as err:  # the schema's own exclusivity guard
            raise ConflictError(f"pod {pod.uid}: {err}") from None
        return entry

    def bind(self, uid: str, now: Optional[float] = None) -> Entry:
        now = time.time() if now is None else now
        entry = _entry_or_fail(self.view, uid)
        if entry.state == BOUND:
            return entry
        gen = self._generation()
        self._ledger._run(sql.set_bound, uid, now, gen)
        return sql.replace_entry(entry, state=BOUND, deadline=None, bound_at=now, generation=gen)

    def forget(self, uid: str) -> Entry:
        entry = _entry_or_fail(self.view, uid)
        if entry.state != ASSUMED:
            raise NotInLedger(f"pod {uid} is bound, not assumed: release it instead of forgetting it")
        self._ledger._run(sql.delete_entries, [uid], self._generation())
        return entry

    def release(self, uid: str) -> Entry:
        entry = _entry_or_fail(self.view, uid)
        self._ledger._run(sql.delete_entries, [uid], self._generation())
        return entry

    def expire(self, now: Optional[float] = None) -> List[Entry]:
        now = time.time() if now is None else now
        gone = [e for e in self.view.entries if e.state == ASSUMED and e.deadline is not None and e.deadline <= now]
        if gone:
            self._ledger._run(sql.delete_entries, [e.uid for e in gone], self._generation())
        return gone


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
