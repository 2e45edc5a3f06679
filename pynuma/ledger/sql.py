"""The ledger's SQLite schema and statements (no transaction control here: :mod:`.store` owns it).

Exclusivity is also enforced by the schema itself: triggers refuse a CPU or
a device already held by another pod, so even a buggy writer cannot record
one twice (containers of one pod may share, as init containers hand their
CPUs on to app containers); deleting a pod cascades to what it holds.
"""
from __future__ import annotations

import dataclasses
import json
import sqlite3
from typing import Dict, List, Sequence

from ..cpuset import CPUSet
from ..policy.memorymanager.state import Block
from . import stored
from .model import Entry, LedgerView, NodeConfig, Placement

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pods (
    uid TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('assumed', 'bound')),
    requests TEXT NOT NULL,
    assumed_at REAL NOT NULL,
    deadline REAL,
    bound_at REAL,
    generation INTEGER NOT NULL,
    seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS cpus (
    cpu INTEGER NOT NULL,
    pod_uid TEXT NOT NULL REFERENCES pods(uid) ON DELETE CASCADE,
    container TEXT NOT NULL,
    PRIMARY KEY (cpu, pod_uid, container)
);
CREATE TABLE IF NOT EXISTS memory (
    pod_uid TEXT NOT NULL REFERENCES pods(uid) ON DELETE CASCADE,
    container TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    size INTEGER NOT NULL,
    numa TEXT NOT NULL,
    PRIMARY KEY (pod_uid, container, seq)
);
CREATE TABLE IF NOT EXISTS devices (
    resource TEXT NOT NULL,
    device_id TEXT NOT NULL,
    pod_uid TEXT NOT NULL REFERENCES pods(uid) ON DELETE CASCADE,
    container TEXT NOT NULL,
    PRIMARY KEY (resource, device_id, pod_uid, container)
);
CREATE INDEX IF NOT EXISTS cpus_by_pod ON cpus(pod_uid);
CREATE INDEX IF NOT EXISTS devices_by_pod ON devices(pod_uid);
CREATE TRIGGER IF NOT EXISTS cpu_held_once BEFORE INSERT ON cpus
WHEN EXISTS (SELECT 1 FROM cpus WHERE cpu = NEW.cpu AND pod_uid <> NEW.pod_uid)
BEGIN SELECT RAISE(ABORT, 'exclusive CPU already held by another pod'); END;
CREATE TRIGGER IF NOT EXISTS device_held_once BEFORE INSERT ON devices
WHEN EXISTS (SELECT 1 FROM devices WHERE resource = NEW.resource AND device_id = NEW.device_id
             AND pod_uid <> NEW.pod_uid)
BEGIN SELECT RAISE(ABORT, 'device already held by another pod'); END;
"""


def prepare(conn: sqlite3.Connection) -> None:
    """Per-connection settings: WAL (readers never block the writer), durable commits, cascades."""
    conn.execute("PRAGMA journal_mode=WAL")
    # FULL: a commit that returned is on disk, so it survives power loss as well as kill -9
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")


def is_created(conn: sqlite3.Connection) -> bool:
    """Whether the tables exist at a schema this pynuma reads (a read only: no lock is needed for it)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.OperationalError:
        return False  # no meta table yet (or the database is busy being created): :func:`create` decides
    value = row[0] if row else None
    return isinstance(value, str) and value.isascii() and value.isdigit() and int(value) <= SCHEMA_VERSION


def readable(conn: sqlite3.Connection) -> bool:
    """Whether the tables exist (a read-only probe): ``False`` when there is no schema yet (:func:`create`
    decides), :class:`LedgerDamaged` for a schema pynuma does not read, ``sqlite3.OperationalError`` when
    the database cannot be read now (busy being created, no ``meta`` table, no ``-shm`` file possible)."""
    row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if row is None:
        return False
    value = row[0]
    if not (isinstance(value, str) and value.isascii() and value.isdigit()):
        raise LedgerDamaged(f"damaged: schema version {str(value)[:40]!r} is not a number")
    if int(value) > SCHEMA_VERSION:
        raise LedgerDamaged(f"ledger schema {value} is newer than this pynuma understands ({SCHEMA_VERSION})")
    return True


def create(conn: sqlite3.Connection) -> None:
    """Create the tables once (under the ledger lock); refuse a database of a newer schema."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # one statement at a time: executescript() would commit the open transaction first
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None and conn.execute("SELECT 1 FROM pods LIMIT 1").fetchone() is not None:
            # a ledger that holds pods lost its meta rows: never reset its generation or config
            raise sqlite3.DatabaseError("damaged: it holds pods but no schema, generation or config")
        if row is None:
            conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)",
                             [("schema", str(SCHEMA_VERSION)), ("generation", "0"),
                              ("config", json.dumps(NodeConfig().to_json()))])
        elif not (isinstance(row[0], str) and row[0].isascii() and row[0].isdigit()):
            raise sqlite3.DatabaseError(f"damaged: schema version {str(row[0])[:40]!r} is not a number")
        elif int(row[0]) > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"ledger schema {row[0]} is newer than this pynuma understands "
                                        f"({SCHEMA_VERSION})")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _statements(script: str):
    """The script's statements one by one (a trigger body holds ``;`` of its own)."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                yield pending
            pending = ""


class LedgerDamaged(Exception):
    """The database holds what pynuma never writes (edited by hand or by another program)."""


# what a value read back may fail with when the row was not written by pynuma
_DECODING_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError, RecursionError)


def _meta(conn: sqlite3.Connection, key: str) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    if row is None:
        raise LedgerDamaged(f"damaged: no {key} in its meta table")
    if type(row[0]) is not str:
        raise LedgerDamaged(f"damaged: meta.{key}: {stored.shown(row[0])} is not text")
    return row[0]


def _generation(conn: sqlite3.Connection) -> int:
    text = _meta(conn, "generation")
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise LedgerDamaged(f"damaged: generation {text[:40]!r} is not a count")
    return int(text)


def read_view(conn: sqlite3.Connection) -> LedgerView:
    """Everything, as one :class:`LedgerView` (call inside a transaction for a consistent read);
    :class:`LedgerDamaged` naming the key or column when a value is one pynuma never writes."""
    try:
        return _decode_view(conn)
    except stored.Damaged as err:
        raise LedgerDamaged(f"damaged: {err}") from None
    except _DECODING_ERRORS as err:  # a check :mod:`.stored` lacks: still one error naming the database
        raise LedgerDamaged(f"damaged: {type(err).__name__}: {err}") from None


def _decode_view(conn: sqlite3.Connection) -> LedgerView:
    """Every value read is checked here, once (:mod:`.stored`): the rest of pynuma trusts the view."""
    generation = _generation(conn)
    config = stored.config_text(_meta(conn, "config"))
    cpus: Dict[str, Dict[str, List[int]]] = {}
    cpu_row = stored.cpu_row
    for cpu, uid, cont in conn.execute("SELECT cpu, pod_uid, container FROM cpus ORDER BY cpu"):
        cpu_row(cpu, uid, cont)
        cpus.setdefault(uid, {}).setdefault(cont, []).append(cpu)
    memory: Dict[str, Dict[str, List[Block]]] = {}
    memory_row = stored.memory_row
    for uid, cont, typ, size, numa in conn.execute(
            "SELECT pod_uid, container, type, size, numa FROM memory ORDER BY pod_uid, container, seq"):
        memory.setdefault(uid, {}).setdefault(cont, []).append(Block(memory_row(uid, cont, typ, size, numa), typ, size))
    devices: Dict[str, Dict[str, Dict[str, List[str]]]] = {}
    device_row = stored.device_row
    for res, dev, uid, cont in conn.execute(
            "SELECT resource, device_id, pod_uid, container FROM devices ORDER BY rowid"):
        device_row(res, dev, uid, cont)
        devices.setdefault(uid, {}).setdefault(cont, {}).setdefault(res, []).append(dev)
    entries = []
    pod_row = stored.pod_row
    for uid, name, ns, state, req, at, deadline, bound_at, gen in conn.execute(
            "SELECT uid, name, namespace, state, requests, assumed_at, deadline, bound_at, generation "
            "FROM pods ORDER BY seq"):
        requests = pod_row(uid, name, ns, state, req, at, deadline, bound_at, gen)
        placement = Placement({c: CPUSet(ids) for c, ids in cpus.get(uid, {}).items()}, memory.get(uid, {}),
                              devices.get(uid, {}))
        entries.append(Entry(uid, name, ns, state, requests, at, deadline, bound_at, gen, placement))
    return LedgerView(generation, config, tuple(entries))


def _bump(conn: sqlite3.Connection, generation: int) -> None:
    conn.execute("UPDATE meta SET value=? WHERE key='generation'", (str(generation),))


def write_config(conn: sqlite3.Connection, config: NodeConfig) -> None:
    conn.execute("UPDATE meta SET value=? WHERE key='config'", (json.dumps(config.to_json(), sort_keys=True),))
    _bump(conn, _generation(conn) + 1)


def insert_entry(conn: sqlite3.Connection, e: Entry) -> None:
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM pods").fetchone()[0]
    conn.execute("INSERT INTO pods(uid, name, namespace, state, requests, assumed_at, deadline, bound_at, "
                 "generation, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (e.uid, e.name, e.namespace, e.state, json.dumps(dict(e.requests), sort_keys=True), e.assumed_at,
                  e.deadline, e.bound_at, e.generation, seq))
    conn.executemany("INSERT INTO cpus(cpu, pod_uid, container) VALUES (?, ?, ?)",
                     [(cpu, e.uid, c) for c, s in e.placement.cpus.items() for cpu in s])
    conn.executemany("INSERT INTO memory(pod_uid, container, seq, type, size, numa) VALUES (?, ?, ?, ?, ?, ?)",
                     [(e.uid, c, i, b.type, b.size, json.dumps(list(b.numa_affinity or ())))
                      for c, blocks in e.placement.memory.items() for i, b in enumerate(blocks)])
    conn.executemany("INSERT INTO devices(resource, device_id, pod_uid, container) VALUES (?, ?, ?, ?)",
                     [(r, str(i), e.uid, c) for c, d in e.placement.devices.items() for r, ids in d.items()
                      for i in ids])
    _bump(conn, e.generation)


def set_bound(conn: sqlite3.Connection, uid: str, now: float, generation: int) -> None:
    conn.execute("UPDATE pods SET state='bound', deadline=NULL, bound_at=?, generation=? WHERE uid=?",
                 (now, generation, uid))
    _bump(conn, generation)


def delete_entries(conn: sqlite3.Connection, uids: Sequence[str], generation: int) -> None:
    conn.executemany("DELETE FROM pods WHERE uid=?", [(u,) for u in uids])
    _bump(conn, generation)


def replace_entry(entry: Entry, **changes) -> Entry:
    return dataclasses.replace(entry, **changes)
