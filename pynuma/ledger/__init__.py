"""Node resource accounting: pod requests, fit, and a crash-safe ledger shared by every process.

* :mod:`pynuma.policy.podrequests` - what a pod asks for, as the scheduler computes it
  (``pod_requests``, ``pod_limits``, ``RequestOptions`` are re-exported here);
* :mod:`.fit` - the scheduler's ``NodeResourcesFit`` and the kubelet's admission predicate (pure);
* :mod:`.store` - :class:`Ledger`, the SQLite ledger (assume / bind / forget / release / expire);
* :mod:`.checkpoints` - the kubelet checkpoint files derived from the ledger.

Submodules are imported on use, so ``import pynuma.ledger`` stays cheap.
"""
from __future__ import annotations

_LAZY = {
    "pod_requests": "..policy.podrequests",
    "pod_limits": "..policy.podrequests",
    "RequestOptions": "..policy.podrequests",
    "FitResult": ".fit",
    "FitOptions": ".fit",
    "NodeState": ".node",
    "Ledger": ".store",
    "ConflictError": ".store",
    "FitError": ".store",
    "Entry": ".store",
    "Placement": ".store",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pynuma.ledger' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = sorted(_LAZY)
