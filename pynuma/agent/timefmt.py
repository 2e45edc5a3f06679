"""Kubernetes time stamps: ``metav1.Time`` (RFC 3339, seconds) and ``metav1.MicroTime`` (microseconds)."""
from __future__ import annotations

import datetime

_UTC = datetime.timezone.utc


def rfc3339(t: float) -> str:
    """``2024-05-01T12:00:00Z`` (``metav1.Time`` drops sub-second precision)."""
    return datetime.datetime.fromtimestamp(int(t), _UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time(t: float) -> str:
    """``2024-05-01T12:00:00.123456Z`` (``metav1.MicroTime``, what a Lease carries)."""
    return datetime.datetime.fromtimestamp(t, _UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> float:
    """Seconds since the epoch of either form; ``ValueError`` otherwise."""
    if not isinstance(text, str) or not text.endswith("Z"):
        raise ValueError(f"not a UTC RFC 3339 time: {text!r}")
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if "." in text else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.datetime.strptime(text, fmt).replace(tzinfo=_UTC).timestamp()
