"""Pods of the cgroup-settings vectors, built with :meth:`pynuma.pod.Pod.from_dict`.

The vectors leave some container names empty (names are informational
there); a pod needs names, so an empty one becomes ``c<index>``.
"""
from __future__ import annotations

from pynuma.pod import Pod


def _named(containers, prefix):
    out = []
    for i, c in enumerate(containers or []):
        c = dict(c)
        if not c.get("name"):
            c["name"] = f"{prefix}{i}"
        out.append(c)
    return out


def build_pod(raw, where="vector"):
    raw = dict(raw)
    raw.setdefault("name", "pod")
    raw["containers"] = _named(raw.get("containers"), "c")
    if "initContainers" in raw:
        raw["initContainers"] = _named(raw["initContainers"], "init")
    return Pod.from_dict(raw, where=where)
