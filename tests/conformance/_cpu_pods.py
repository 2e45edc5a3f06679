"""Pods of the CPU Manager vectors: ``{"uid", "containers": [{"name","request","limit","init"?,"restart_policy"?}]}``."""
from __future__ import annotations

from pynuma.pod import Container, Pod
from pynuma.quantity import Quantity

MEMORY = Quantity.parse("1Gi")  # the vectors' memory request always equals the limit


def container(raw) -> Container:
    req = {"memory": MEMORY}
    lim = {"memory": MEMORY}
    if raw.get("request") is not None:
        req["cpu"] = Quantity.parse(raw["request"])
    if raw.get("limit") is not None:
        lim["cpu"] = Quantity.parse(raw["limit"])
    return Container(name=raw["name"], requests=req, limits=lim, restart_policy=raw.get("restart_policy"))


def pod(raw) -> Pod:
    inits = tuple(container(c) for c in raw["containers"] if c.get("init"))
    apps = tuple(container(c) for c in raw["containers"] if not c.get("init"))
    return Pod(name=raw["uid"], uid=raw["uid"], containers=apps, init_containers=inits)
