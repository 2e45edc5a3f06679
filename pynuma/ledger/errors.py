"""Errors of the ledger: a stale writer, a pod that does not fit, an unknown pod, a busy lock."""
from __future__ import annotations

from ..errors import AllocationError, PynumaError


class ConflictError(PynumaError):
    """The ledger changed under a writer: its view is stale or its placement is taken.

    Nothing was written; re-read (``Ledger.snapshot()``) and retry.
    """

    exit_code = 1


class FitError(AllocationError):
    """The pod does not fit what the node has left; ``result`` is the :class:`~pynuma.ledger.fit.FitResult`."""

    def __init__(self, message: str, result) -> None:
        super().__init__(message)
        self.result = result


class NotInLedger(PynumaError):
    """No entry for that pod UID (or not in the state the operation needs)."""

    exit_code = 1


class LedgerBusy(PynumaError):
    """Another process held the ledger's lock for longer than the timeout."""

    exit_code = 1
