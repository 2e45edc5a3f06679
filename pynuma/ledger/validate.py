"""Hugepage checks a pod must pass before fit is even asked (the API server's and emptyDir's rules).

>>> from pynuma.pod import Pod
>>> pod = Pod.from_dict({"name": "p", "containers": [{"name": "c",
...     "requests": {"hugepages-2Mi": "3Mi"}, "limits": {"hugepages-2Mi": "3Mi"}}]})
>>> [e.split(": ")[-1] for e in validate_hugepages(pod)][1:]
['3Mi is not positive integer multiple of hugepages-2Mi', 'HugePages require cpu or memory']

Per container (``pkg/apis/core/validation``): a hugepage quantity is a whole
number of pages, requests equal limits, and cpu or memory is asked for
alongside.  An ``emptyDir`` with ``medium: HugePages-<size>`` needs a
container requesting that page size, and ``medium: HugePages`` needs exactly
one size among the containers (``pkg/volume/emptydir``).
"""
from __future__ import annotations

from typing import List, Mapping, Optional

from ..hugepages.resources import (PREFIX, is_hugepage_resource_name, page_size_from_resource_name,
                                   validate_container_resources)
from ..errors import InputError
from ..pod import Pod
from ..quantity import Quantity

MEDIUM_HUGEPAGES = "HugePages"
MEDIUM_PREFIX = "HugePages-"


def _page_sizes(pod: Pod) -> List[Quantity]:
    sizes = []
    for c in pod.all_containers():
        for name in c.requests:
            if is_hugepage_resource_name(name):
                try:
                    sizes.append(page_size_from_resource_name(name))
                except InputError:
                    continue  # reported by the resource checks
    for name in (pod.pod_requests or {}):
        if is_hugepage_resource_name(name):
            try:
                sizes.append(page_size_from_resource_name(name))
            except InputError:
                continue
    return sizes


def _medium(volume: Mapping) -> Optional[str]:
    empty_dir = volume.get("emptyDir") if isinstance(volume, Mapping) else None
    if not isinstance(empty_dir, Mapping):
        return None
    medium = empty_dir.get("medium")
    return medium if isinstance(medium, str) and medium.startswith(MEDIUM_HUGEPAGES) else None


def _volume_errors(pod: Pod) -> List[str]:
    errors: List[str] = []
    sizes = _page_sizes(pod)
    for vol in pod.volumes:
        medium = _medium(vol)
        if medium is None:
            continue
        name = vol.get("name", "?")
        if medium == MEDIUM_HUGEPAGES:
            if not sizes:
                errors.append(f"volume {name}: medium {medium}: hugePages storage requested, "
                              f"but there is no resource request for huge pages")
            elif len({s.amount for s in sizes}) > 1:
                errors.append(f"volume {name}: medium: {medium} can't be used if container requests "
                              f"multiple huge page sizes")
            continue
        try:
            want = Quantity.parse(medium[len(MEDIUM_PREFIX):])
        except InputError:
            errors.append(f"volume {name}: medium {medium}: not a valid hugepage size")
            continue
        if not any(s == want for s in sizes):
            errors.append(f"volume {name}: medium {medium}: hugePages storage requested, "
                          f"but there is no resource request for huge pages of size {PREFIX}{want}")
    return errors


def validate_hugepages(pod: Pod) -> List[str]:
    """Every hugepage problem of ``pod``, one sentence each naming the container or volume (``[]`` = valid)."""
    errors: List[str] = []
    for c in pod.all_containers():
        if not any(is_hugepage_resource_name(n) for n in list(c.requests) + list(c.limits)):
            continue
        errors += [f"container {c.name}: {e}" for e in validate_container_resources(c.requests, c.limits)]
    pod_level = {**(pod.pod_limits or {}), **(pod.pod_requests or {})}
    if any(is_hugepage_resource_name(n) for n in pod_level):
        errors += [f"pod resources: {e}" for e in validate_container_resources(pod.pod_requests or {},
                                                                               pod.pod_limits or {})]
    return errors + _volume_errors(pod)
