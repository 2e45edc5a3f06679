"""How pods become cgroup settings, as the kubelet computes them (pure: no I/O).

* :mod:`.conversions` — milli-CPU ↔ shares ↔ quota ↔ v2 weight, hugetlb limits;
* :mod:`.config` — :class:`ResourceConfig`, one cgroup's settings;
* :mod:`.podresources` — a pod's summed requests and limits (the shared :mod:`..podrequests` rule);
* :mod:`.pod` — the pod cgroup (``ResourceConfigForPod``);
* :mod:`.container` — a container cgroup (the runtime's share of the work);
* :mod:`.qos` — the ``kubepods`` / ``burstable`` / ``besteffort`` tiers;
* :mod:`.node` — node-allocatable enforcement on ``kubepods``.

:mod:`pynuma.apply` writes the results.
"""
from __future__ import annotations

from .config import ResourceConfig
from .node import node_allocatable_cgroup_config
from .pod import resource_config_for_pod
from .qos import QoSCgroupConfig, qos_cgroup_config

__all__ = ["ResourceConfig", "resource_config_for_pod", "qos_cgroup_config", "QoSCgroupConfig",
           "node_allocatable_cgroup_config"]
