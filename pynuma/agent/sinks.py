"""Where the agent publishes: anything with ``publish_lease``, ``publish_status`` and ``publish_topology``.

Each method takes a Kubernetes object as a plain dict (``coordination.k8s.io/v1``
Lease, ``v1`` Node with ``status``, ``topology.node.k8s.io/v1alpha2``
NodeResourceTopology).  A sink may also have ``open()`` (called by
``NodeAgent.start()`` / ``run()``), ``close()`` (called by ``stop()``) and
``attach(agent)`` (called once when the agent takes it, for sinks that read
more than the objects, like the Prometheus endpoint).  A sink that raises
does not stop the agent: the error is kept in ``agent.errors``.

>>> sink = DirectorySink("/run/pynuma")     # doctest: +SKIP
>>> NodeAgent(sinks=[sink])                  # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
from typing import Any, Mapping, Protocol, runtime_checkable

from ..errors import InputError, PynumaError

LEASE_FILE = "lease.json"
STATUS_FILE = "node-status.json"
TOPOLOGY_FILE = "noderesourcetopology.json"


@runtime_checkable
class Sink(Protocol):
    """The three publishing calls every sink answers."""

    def publish_lease(self, lease: Mapping[str, Any]) -> None: ...

    def publish_status(self, node: Mapping[str, Any]) -> None: ...

    def publish_topology(self, nrt: Mapping[str, Any]) -> None: ...


class DirectorySink:
    """Writes ``lease.json``, ``node-status.json`` and ``noderesourcetopology.json`` atomically into ``path``.

    A reader sees the previous or the new object, never half of one.  The
    directory is created when missing.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as err:
            raise InputError(f"output directory {path}: {err.strerror or err}") from None
        if not os.path.isdir(path):
            raise InputError(f"output directory {path}: not a directory")
        probe = os.path.join(path, f".pynuma-probe-{os.getpid()}")
        try:  # a directory that takes no files (/proc, read-only) fails here, once, not at every publish
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
            os.unlink(probe)
        except OSError as err:
            raise PynumaError(f"output directory {path}: cannot write there: {err.strerror or err}") from None

    def _write(self, name: str, obj: Mapping[str, Any]) -> None:
        from ..state.atomic import write_atomic

        write_atomic(os.path.join(self.path, name), json.dumps(obj, indent=2, sort_keys=True) + "\n")

    def publish_lease(self, lease: Mapping[str, Any]) -> None:
        self._write(LEASE_FILE, lease)

    def publish_status(self, node: Mapping[str, Any]) -> None:
        self._write(STATUS_FILE, node)

    def publish_topology(self, nrt: Mapping[str, Any]) -> None:
        self._write(TOPOLOGY_FILE, nrt)

    def __repr__(self) -> str:
        return f"DirectorySink({self.path!r})"
