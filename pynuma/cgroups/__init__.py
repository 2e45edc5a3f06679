"""The kubelet's cgroups: mode detection, pod/container naming, and a fast usage walk.

Public API (used by eviction and allocatable)::

    from pynuma.cgroups import detect, walk_pods, node_root_stats, kubepods_stats
    layout = detect(fs)             # mode v1 / v2 / hybrid, driver, kubepods path, reasons
    pods = walk_pods(fs, layout)    # [PodCgroupStats(uid, qos, stats, containers)]
"""
from __future__ import annotations

from .detect import CgroupLayout, detect
from .walk import (UNLIMITED, CgroupStats, ContainerCgroupStats, PodCgroupStats, kubepods_stats,
                   node_root_stats, walk_pods)

__all__ = ["CgroupLayout", "detect", "walk_pods", "node_root_stats", "kubepods_stats", "CgroupStats",
           "ContainerCgroupStats", "PodCgroupStats", "UNLIMITED"]
