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
import stat
import threading
import time
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
_UNSHARED_TRIES = 20  # reads of a read-only directory's ledger that a writer changed, before giving up (~0.7 s)

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
        self._timeout = timeout
        self._lock = FileLock(self.path + ".lock", timeout)
        self._conn = None
        # "rw": a writer's connection; "ro": a reader's (``mode=ro``, no lock file); "unshared": a reader that
        # cannot create the -shm file WAL readers use (a read-only directory): each read opens its own
        # connection (see :meth:`_read_unshared`)
        self._mode = "rw"
        # files a writer killed between its commit and its file writes left behind, rewritten on open
        # (``repair=False``: left for :meth:`check_checkpoints` to report)
        self.synced_on_open: List[str] = []
        try:
            # a reader (``repair=False``) of a ledger that exists opens it read-only and takes no lock: it
            # never waits for a writer, and needs no write access to the directory or the files
            if repair or not self._open_reader():
                self._open_writer()
                if repair or not self._run(sql.is_created):
                    with self._mutex, self._lock:
                        self._run(sql.create)
                        if repair:
                            self.synced_on_open = checkpoints.sync(self.checkpoint_dir, self._derive(self._read()))
        except BaseException:
            # a ledger that failed to open holds nothing: its connection and lock file close here
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._lock.close()
            raise

    # -- plumbing ------------------------------------------------------------------------------------
    def _open_writer(self) -> None:
        """The lock file and a read-write connection (a reader's connection is replaced)."""
        self._lock._open()  # an unwritable directory fails here, with the OS's reason and the path
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        try:
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.DatabaseError as err:
            raise CheckpointError(f"{self.path}: {err}") from None
        self._conn = conn
        try:
            sql.prepare(conn)
        except sqlite3.DatabaseError as err:
            raise CheckpointError(f"{self.path}: {err}") from None
        self._mode = "rw"

    def _writable(self) -> None:
        """A reader that is asked to write becomes a writer (it needs the lock file and write access then)."""
        if self._mode != "rw":
            self._open_writer()

    def _connect_ro(self, immutable: bool = False) -> sqlite3.Connection:
        quoted = self.path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        uri = f"file://{quoted}?mode=ro" + ("&immutable=1" if immutable else "")
        return sqlite3.connect(uri, uri=True, timeout=self._timeout, isolation_level=None, check_same_thread=False)

    def _probe(self, immutable: bool) -> Optional[bool]:
        """Open read-only and look at the schema: ``True`` (kept open), ``False`` (no schema yet),
        ``None`` (cannot be read this way now)."""
        try:
            conn = self._connect_ro(immutable)
        except sqlite3.OperationalError:
            return None
        except sqlite3.DatabaseError as err:
            raise CheckpointError(f"{self.path}: {err}") from None
        try:
            created = sql.readable(conn)
        except sqlite3.OperationalError:
            conn.close()
            return None
        except (sqlite3.DatabaseError, sql.LedgerDamaged) as err:  # not a ledger, or a newer one
            conn.close()
            raise CheckpointError(f"{self.path}: {err}") from None
        if created and not immutable:
            self._conn = conn
        else:
            conn.close()
        return created

    def _open_reader(self) -> bool:
        """Open an existing ledger read-only; ``False`` when the writer's path must open it (no ledger yet)."""
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):
                return False  # never opened read-only (a FIFO would block): the writer's path says what it is
        except OSError:
            return False  # nothing to read yet: the writer's path creates it, or says why it cannot
        for companion in ("-wal", "-shm"):
            try:
                if not stat.S_ISREG(os.lstat(self.path + companion).st_mode):
                    return False
            except FileNotFoundError:
                pass
            except OSError:
                return False
        created = self._probe(immutable=False)
        if created is not None:
            self._mode = "ro"
            return created
        if os.access(os.path.dirname(self.path) or ".", os.W_OK):
            return False  # busy being created, or no tables yet: the writer's path decides under the lock
        # a WAL reader needs a -shm file and may not create one here: read the file itself, checking
        # that no writer changed it meanwhile (:meth:`_read_unshared`)
        if _size(self.path + "-wal"):
            raise self._unshared_error()
        if not self._probe(immutable=True):
            return False
        self._mode = "unshared"
        return True

    def _unshared_error(self) -> PynumaError:
        directory, name = os.path.split(self.path)
        return PynumaError(f"{self.path}: cannot be read without write access to {directory} while {name}-wal "
                           f"holds commits not yet in the database (SQLite needs to create {name}-shm to read them): "
                           f"run a ledger writer (pynuma ledger expire) as its owner, or read as a user who may write "
                           f"{directory}")

    def _read_unshared(self) -> LedgerView:
        """A consistent read without a -shm file: the committed state is all in the database file when the
        write-ahead log is empty, and a read is kept only when the file did not change while it ran."""
        wait = 0.001
        for _ in range(_UNSHARED_TRIES):
            if _size(self.path + "-wal"):
                # a writer is at work: its -shm file is there and the log is read through it
                try:
                    return self._read_once(self._connect_ro())
                except CheckpointError:
                    raise  # damaged: no retry mends that
                except (sqlite3.OperationalError, PynumaError):
                    pass  # the writer finished meanwhile (its -shm gone): look again
            else:
                before = _stamp(self.path)
                view = self._read_once(self._connect_ro(immutable=True))
                if before is not None and _stamp(self.path) == before and not _size(self.path + "-wal"):
                    return view
            time.sleep(wait)
            wait = min(wait * 2, 0.05)
        raise self._unshared_error()

    def _read_once(self, conn: sqlite3.Connection) -> LedgerView:
        try:
            try:
                conn.execute("BEGIN")
                return sql.read_view(conn)
            finally:
                conn.close()
        except sqlite3.OperationalError as err:
            raise PynumaError(f"{self.path}: {err}") from None
        except (sqlite3.DatabaseError, sql.LedgerDamaged) as err:
            raise CheckpointError(f"{self.path}: {err}") from None

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
        if self._mode == "unshared":
            return self._read_unshared()
        return self._run(sql.read_view)

    def _derive(self, view: LedgerView) -> Dict[str, str]:
        """The checkpoint files of ``view``; entries the configured machine cannot hold name the database."""
        try:
            return checkpoints.derive(view)
        except CheckpointError as err:
            raise CheckpointError(f"{self.path}: damaged: {err}") from None

    @contextmanager
    def transaction(self) -> Iterator["Transaction"]:
        """Several changes as one: they all commit at the end of the ``with`` block, or none does.

        The lock is held for the whole block, so decisions made from
        ``tx.view`` inside it cannot go stale.  On commit the checkpoint files
        are regenerated, still under the lock.
        """
        with self._mutex:
            self._writable()
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
            checkpoints.sync(self.checkpoint_dir, self._derive(view) if view is not None else {})

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._lock.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reads ---------------------------------------------------------------------------------------
    def snapshot(self) -> LedgerView:
        """A consistent view of the whole ledger at its current ``generation``."""
        with self._mutex:
            if self._mode == "unshared":
                return self._read_unshared()
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
        return self._derive(self.snapshot())

    def check_checkpoints(self) -> List["checkpoints.Finding"]:
        """How the files in ``checkpoint_dir`` differ from the ledger (nothing is written)."""
        with self._mutex, self._lock:
            return checkpoints.check(self.checkpoint_dir, self._derive(self._read()))

    def sync_checkpoints(self) -> List[str]:
        """Rewrite files that are behind the ledger and remove stale temps; the names rewritten."""
        with self._mutex, self._lock:
            return checkpoints.sync(self.checkpoint_dir, self._derive(self._read()))


def _size(path: str) -> int:
    """Size of the file at ``path`` (0 when there is none)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _stamp(path: str):
    """What changes when a file is written or replaced (``None`` when it is gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
