"""pynuma: Linux node resources for Python.

Discovery of CPUs, caches, NUMA nodes, memory, hugepages and devices;
kubelet-compatible placement (Topology Manager, CPU Manager, Memory
Manager); binding; hugepage pools; cgroup pressure and eviction decisions.

Public names are imported lazily so ``import pynuma`` stays cheap::

    import pynuma
    topo = pynuma.discover()              # or discover(root="/path/to/dump")
    print(topo.online_cpus, [n.id for n in topo.numa_nodes])
"""
__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "CPUSet": "pynuma.cpuset",
    "FsRoot": "pynuma.fsroot",
    "Quantity": "pynuma.quantity",
    "Pod": "pynuma.pod",
    "Container": "pynuma.pod",
    "load_pods": "pynuma.pod",
    "PynumaError": "pynuma.errors",
    "InputError": "pynuma.errors",
    "ParseError": "pynuma.errors",
    "TopologyError": "pynuma.errors",
    "CheckpointError": "pynuma.errors",
    "AllocationError": "pynuma.errors",
    "AccessDenied": "pynuma.errors",
    "NoSuchProcess": "pynuma.errors",
    "Unsupported": "pynuma.errors",
    "native_available": "pynuma._impl",
    "native_in_use": "pynuma._impl",
    "features": "pynuma.features",
    "discover": "pynuma.discover",
    "Topology": "pynuma.model",
    "NUMAMask": "pynuma.policy.topologymanager.bitmask",
    "TopologyHint": "pynuma.policy.topologymanager.hints",
    "HintProvider": "pynuma.policy.topologymanager.hints",
    "NUMAInfo": "pynuma.policy.topologymanager.numa_info",
    "TopologyManager": "pynuma.policy.topologymanager.manager",
    "TopologyAffinityError": "pynuma.policy.topologymanager.policies",
    "DeviceHintProvider": "pynuma.policy.devicemanager.inventory",
    "DeviceInventory": "pynuma.policy.devicemanager.inventory",
    "admit_pod": "pynuma.policy.admit",
    "CPUTopology": "pynuma.policy.cpumanager.topology",
    "load_cpu_topology": "pynuma.topology_file",
    "take_by_topology": "pynuma.policy.cpumanager.take",
    "StaticPolicy": "pynuma.policy.cpumanager.static_policy",
    "CPUState": "pynuma.policy.cpumanager.static_policy",
    "PciDevice": "pynuma.model_devices",
    "NetInterface": "pynuma.model_devices",
    "MemPolicy": "pynuma.bind",
    "get_affinity": "pynuma.bind",
    "set_affinity": "pynuma.bind",
    "get_mempolicy": "pynuma.bind",
    "set_mempolicy": "pynuma.bind",
    "processes": "pynuma.procs",
    "ProcessPlacement": "pynuma.procs",
    "Processes": "pynuma.procs",
    "walk_pods": "pynuma.cgroups",
    "node_root_stats": "pynuma.cgroups",
    "kubepods_stats": "pynuma.cgroups",
    "qos_class": "pynuma.policy.qos",
    "container_oom_score_adj": "pynuma.policy.oom_score",
    "node_fs_stats": "pynuma.pressure.fsstats",
    "Threshold": "pynuma.policy.eviction.thresholds",
    "parse_threshold_config": "pynuma.policy.eviction.thresholds",
    "EvictionConfig": "pynuma.policy.eviction.manager",
    "EvictionState": "pynuma.policy.eviction.manager",
    "read_host": "pynuma.pressure.host",
    "load_kubelet_config": "pynuma.config.kubelet",
    "node_status_allocatable": "pynuma.policy.allocatable",
    "read_hugepages": "pynuma.hugepages.pools",
    "hugepage_capacity": "pynuma.hugepages.pools",
    "set_hugepage_pool": "pynuma.hugepages.allocate",
    "MemoryManager": "pynuma.policy.memorymanager.manager",
    "NodeAgent": "pynuma.agent.runtime",
    "AgentConfig": "pynuma.agent.config",
    "ResourceConfig": "pynuma.policy.cgroupconfig",
    "resource_config_for_pod": "pynuma.policy.cgroupconfig",
    "qos_cgroup_config": "pynuma.policy.cgroupconfig",
    "plan_pod": "pynuma.apply",
    "evict_action": "pynuma.apply",
    "pod_requests": "pynuma.policy.podrequests",
    "fit": "pynuma.ledger.fit",
    "FitResult": "pynuma.ledger.fit",
    "NodeState": "pynuma.ledger.node",
    "Ledger": "pynuma.ledger.store",
    "ConflictError": "pynuma.ledger.store",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pynuma' has no attribute {name!r}")
    from ._impl import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = sorted(_LAZY)
