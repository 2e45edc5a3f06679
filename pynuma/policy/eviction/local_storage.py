"""Local-storage limit evictions: emptyDir sizeLimit, pod and container ephemeral-storage limits.

Checked before threshold-based eviction when LocalStorageCapacityIsolation is
on; every offending pod is evicted in the same pass, with grace 1 s.
"""
from __future__ import annotations

from ..._mapping import Mapping

from ...pod import Pod
from ...quantity import Quantity
from .messages import container_ephemeral_message, empty_dir_message, pod_ephemeral_message
from .podstats import PodStats
from .signals import EPHEMERAL_STORAGE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from fractions import Fraction
    from typing import Optional


def _pod_limit(pod: Pod, resource: str) -> Optional[Fraction]:
    """The pod's limit as ``PodLimits`` gives it (sidecar-aware, overhead on a limit that is set and not
    zero); None when no container sets one."""
    from ..podrequests import pod_limits

    q = pod_limits(pod).get(resource)
    return None if q is None else q.amount


def local_storage_violation(pod: Pod, stats: PodStats, dedicated_image_fs: bool) -> Optional[str]:
    """The message of the first local-storage limit the pod exceeds, or ``None``."""
    for v in pod.volumes:
        ed = v.get("emptyDir") if isinstance(v, Mapping) else None
        if not isinstance(ed, Mapping) or ed.get("sizeLimit") in (None, ""):
            continue
        size = Quantity.parse(ed["sizeLimit"])
        used = stats.volumes.get(str(v.get("name")))
        if used is not None and used.used_bytes is not None and size.amount > 0 and used.used_bytes > size.amount:
            return empty_dir_message(str(v.get("name")), size)
    limit = _pod_limit(pod, EPHEMERAL_STORAGE)
    if limit is not None:
        eph = stats.ephemeral_storage
        usage = eph.used_bytes if eph is not None and eph.used_bytes is not None else 0
        if usage > limit:
            return pod_ephemeral_message(_limit_q(pod, limit))
    limits = {c.name: c.limits[EPHEMERAL_STORAGE] for c in pod.containers
              if EPHEMERAL_STORAGE in c.limits and c.limits[EPHEMERAL_STORAGE].value() != 0}
    for cs in stats.containers:
        used = (cs.logs.used_bytes or 0) if cs.logs is not None else 0
        if not dedicated_image_fs and cs.rootfs is not None:
            used += cs.rootfs.used_bytes or 0
        lim = limits.get(cs.name)
        if lim is not None and lim.amount < used:
            return container_ephemeral_message(cs.name, lim)
    return None


def _limit_q(pod: Pod, limit: Fraction) -> Quantity:
    # Keep the format of the containers' own quantities (``1Gi`` stays ``1Gi``).
    for c in pod.all_containers():
        q = c.limits.get(EPHEMERAL_STORAGE)
        if q is not None:
            return Quantity(limit, q.format)
    return Quantity(limit)
