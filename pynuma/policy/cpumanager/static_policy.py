"""The CPU Manager ``static`` policy: exclusive CPUs for Guaranteed containers with integer requests.

State is the kubelet's: a shared (default) CPU pool plus assignments
pod UID -> container name -> CPUs (:class:`CPUState`, the in-memory form of
``cpu_manager_state``).  The policy reads and updates it; it never does I/O.

>>> from pynuma.policy.cpumanager.topology import CPUTopology
>>> topo = CPUTopology.from_cpus([(c, 0, 0, c % 4, 0) for c in range(8)])
>>> policy = StaticPolicy(topo, num_reserved=1)
>>> state = CPUState(); policy.start(state); str(state.default)
'0-7'
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional, Union

from ...cpuset import CPUSet
from ...errors import AllocationError, CheckpointError, InputError
from ...pod import Container, Pod
from .assign import take_packed_bits
from .distribute import take_distributed_bits
from .options import CPUManagerOptions, check_combination, options_from_flags, validate_options
from .state import CPUState
from .topology import CPUTopology


class SMTAlignmentError(AllocationError):
    """full-pcpus-only refused a request (not a multiple of the SMT level, or not enough whole cores)."""

    def __init__(self, requested: int, cpus_per_core: int, available_physical: Optional[int] = None) -> None:
        self.requested, self.cpus_per_core = requested, cpus_per_core
        self.available_physical = available_physical
        if available_physical is None:
            msg = f"SMT Alignment Error: requested {requested} cpus not multiple cpus per core = {cpus_per_core}"
        else:
            msg = (f"SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                   f"{available_physical}, requested CPUs = {requested}, CPUs per core = {cpus_per_core}")
        super().__init__(msg)


class StateMismatch(CheckpointError):
    """The stored state does not fit this machine or this policy (the kubelet refuses to start)."""


def _nodes_of(affinity) -> Optional[list]:
    """NUMA node ids of a hint, a mask or an iterable; ``None`` = no affinity."""
    if affinity is None:
        return None
    aff = getattr(affinity, "numa_affinity", affinity)
    if aff is None:
        return None
    return sorted(int(n) for n in aff)


class StaticPolicy:
    """The kubelet's static CPU policy over one :class:`CPUTopology`.

    ``reserved`` (explicit list) wins over ``num_reserved`` (then the
    allocator picks that many CPUs); a size mismatch raises
    :class:`InputError` with the kubelet's message.
    """

    name = "static"

    def __init__(self, topo: CPUTopology, num_reserved: int = 0, reserved: Optional[CPUSet] = None,
                 options: Union[CPUManagerOptions, Mapping[str, bool], None] = None,
                 topology_manager_policy: Optional[str] = None) -> None:
        if isinstance(options, CPUManagerOptions):
            check_combination(options.flags)
        else:
            options = options_from_flags(options)
        validate_options(options, topo, topology_manager_policy)
        self.topo = topo
        self.options = options
        self.cpu_group_size = topo.cpus_per_core()
        self.cpus_to_reuse: Dict[str, CPUSet] = {}
        if reserved is not None and len(reserved) > 0:
            res = reserved
        else:
            try:
                res = self.take_by_topology(topo.cpus(), num_reserved)
            except AllocationError:
                res = CPUSet()
        if len(res) != num_reserved:
            raise InputError(f"[cpumanager] unable to reserve the required amount of CPUs "
                             f"(size of {res} did not equal {num_reserved})")
        unknown = res - topo.cpus()
        if unknown:
            raise InputError(f"[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
                             f"unknown CPU ID: {min(unknown)}")
        self.reserved = res
        self.reserved_physical = CPUSet.from_bits(topo.siblings_bits(res.bits))

    # -- allocation primitive ----------------------------------------------
    def take_by_topology(self, available: CPUSet, count: int) -> CPUSet:
        """The policy's ``takeByTopology``: its options pick the algorithm."""
        o = self.options
        spread = o.distribute_cpus_across_cores
        if o.distribute_cpus_across_numa:
            group = self.cpu_group_size if o.full_pcpus_only else 1
            return CPUSet.from_bits(take_distributed_bits(self.topo, available.bits, count, max(group, 1), spread))
        return CPUSet.from_bits(take_packed_bits(self.topo, available.bits, count, spread,
                                                 o.prefer_align_cpus_by_uncorecache))

    # -- pools ---------------------------------------------------------------
    def all_cpus(self) -> CPUSet:
        """CPUs the state must account for (minus reserved ones under strict reservation)."""
        cpus = self.topo.cpus()
        return cpus - self.reserved if self.options.strict_cpu_reservation else cpus

    def available_cpus(self, state: CPUState) -> CPUSet:
        return state.default - self.reserved

    def available_physical_cpus(self, state: CPUState) -> CPUSet:
        return state.default - self.reserved_physical

    # -- Start -----------------------------------------------------------------
    def start(self, state: CPUState) -> None:
        """Validate the restored state or initialise an empty one (the kubelet's ``Start``)."""
        problem = self.validate(state)
        if problem:
            raise StateMismatch(problem)

    def validate(self, state: CPUState) -> Optional[str]:
        """The first reason the kubelet would refuse ``state``, or ``None`` (initialises an empty state)."""
        all_cpus = self.all_cpus()
        default = state.default
        if not default:
            if state.assignments:
                return "default cpuset cannot be empty"
            state.default = all_cpus
            return None
        if self.options.strict_cpu_reservation:
            both = self.reserved & default
            if both:
                return f'some of strictly reserved cpus: "{both}" are present in defaultCpuSet: "{default}"'
        elif (self.reserved & default) != self.reserved:
            return f'not all reserved cpus: "{self.reserved}" are present in defaultCpuSet: "{default}"'
        for pod in sorted(state.assignments):
            for container, cset in sorted(state.assignments[pod].items()):
                if cset & default:
                    return (f'pod: {pod}, container: {container} cpuset: "{cset}" overlaps with '
                            f'default cpuset "{default}"')
        known = default | state.assigned()
        if known != all_cpus:
            return f'current set of available CPUs "{all_cpus}" doesn\'t match with CPUs in state "{known}"'
        return None

    # -- requests ----------------------------------------------------------------
    def guaranteed_cpus(self, pod: Pod, container: Container) -> int:
        """Exclusive CPUs the container gets: its integer CPU request in a Guaranteed pod, else 0."""
        from ..qos import qos_class

        if qos_class(pod) != "Guaranteed":
            return 0
        q = container.requests.get("cpu")
        if q is None:
            q = container.limits.get("cpu")
        if q is None:
            return 0
        if q.value() * 1000 != q.milli_value():
            return 0
        return q.value()

    def pod_guaranteed_cpus(self, pod: Pod) -> int:
        """Exclusive CPUs of the whole pod: max(peak init need, app + sidecar sum)."""
        by_init = by_sidecars = 0
        for c in pod.init_containers:
            if "cpu" not in c.requests and "cpu" not in c.limits:
                continue
            n = self.guaranteed_cpus(pod, c)
            if c.is_sidecar:
                by_sidecars += n
            elif by_sidecars + n > by_init:
                by_init = by_sidecars + n
        by_apps = sum(self.guaranteed_cpus(pod, c) for c in pod.containers
                      if "cpu" in c.requests or "cpu" in c.limits)
        return max(by_init, by_apps + by_sidecars)

    # -- Allocate / Remove ------------------------------------------------------------
    def allocate(self, state: CPUState, pod: Pod, container: Container, hint=None) -> Optional[CPUSet]:
        """Give ``container`` its exclusive CPUs (``None`` = it stays in the shared pool).

        ``hint`` is the Topology Manager's affinity (a ``TopologyHint``, a NUMA
        mask or node ids; ``None`` = no affinity).  Raises
        :class:`SMTAlignmentError` / :class:`AllocationError` as the kubelet does.
        """
        n = self.guaranteed_cpus(pod, container)
        if n == 0:
            return None
        if self.options.full_pcpus_only:
            k = self.cpu_group_size
            if k and n % k != 0:
                raise SMTAlignmentError(n, k)
            phys = len(self.available_physical_cpus(state))
            if n > phys:
                raise SMTAlignmentError(n, k, phys)
        existing = state.get(pod.uid, container.name)
        if existing is not None:
            self._update_reuse(pod, container, existing)
            return existing
        cpus = self._allocate_cpus(state, n, _nodes_of(hint), self.cpus_to_reuse.get(pod.uid, CPUSet()))
        state.set(pod.uid, container.name, cpus)
        self._update_reuse(pod, container, cpus)
        return cpus

    def aligned_cpus(self, nodes: Iterable[int], allocatable: CPUSet) -> CPUSet:
        """CPUs of ``allocatable`` on ``nodes`` (on their whole sockets with align-by-socket)."""
        t = self.topo
        if self.options.align_by_socket:
            return allocatable & t.cpus_in_sockets(*t.sockets_in_numa_nodes(*nodes))
        return allocatable & t.cpus_in_numa_nodes(*nodes)

    def _allocate_cpus(self, state: CPUState, n: int, nodes: Optional[list], reusable: CPUSet) -> CPUSet:
        allocatable = self.available_cpus(state) | reusable
        result = CPUSet()
        if nodes is not None:
            aligned = self.aligned_cpus(nodes, allocatable)
            result = self.take_by_topology(aligned, min(n, len(aligned)))
        result = result | self.take_by_topology(allocatable - result, n - len(result))
        state.default = state.default - result
        return result

    def _update_reuse(self, pod: Pod, container: Container, cpus: CPUSet) -> None:
        for uid in [u for u in self.cpus_to_reuse if u != pod.uid]:
            del self.cpus_to_reuse[uid]
        reuse = self.cpus_to_reuse.get(pod.uid, CPUSet())
        for init in pod.init_containers:
            if init.name == container.name:
                if not init.is_sidecar:
                    self.cpus_to_reuse[pod.uid] = reuse | cpus
                    return
                break
        self.cpus_to_reuse[pod.uid] = reuse - cpus

    def remove(self, state: CPUState, pod_uid: str, container: str) -> Optional[CPUSet]:
        """Drop an assignment; CPUs no other container of the pod still uses go back to the shared pool."""
        in_use = CPUSet()
        for name, cset in state.assignments.get(pod_uid, {}).items():
            if name != container:
                in_use = in_use | cset
        released = state.get(pod_uid, container)
        if released is None:
            return None
        state.delete(pod_uid, container)
        back = released - in_use
        state.default = state.default | back
        return back

    # -- hints ---------------------------------------------------------------------
    def container_hints(self, state: CPUState, pod: Pod, container: Container):
        """``{"cpu": [TopologyHint]}`` for one container, or ``None`` (no preference)."""
        from .hints import container_hints

        return container_hints(self, state, pod, container)

    def pod_hints(self, state: CPUState, pod: Pod):
        """``{"cpu": [TopologyHint]}`` for the whole pod, or ``None``."""
        from .hints import pod_hints

        return pod_hints(self, state, pod)


class NonePolicy:
    """The ``none`` policy: every container shares all CPUs; nothing is stored."""

    name = "none"

    def __init__(self, topo: CPUTopology, *args, **kwargs) -> None:
        self.topo = topo

    def start(self, state: CPUState) -> None:
        return None

    def validate(self, state: CPUState) -> Optional[str]:
        return None

    def allocate(self, state: CPUState, pod: Pod, container: Container, hint=None) -> Optional[CPUSet]:
        return None

    def remove(self, state: CPUState, pod_uid: str, container: str) -> Optional[CPUSet]:
        return None

    def container_hints(self, state, pod, container):
        return None

    def pod_hints(self, state, pod):
        return None


POLICIES = {"static": StaticPolicy, "none": NonePolicy}


def new_policy(name: str, topo: CPUTopology, **kwargs):
    """A CPU Manager policy by name (``static`` or ``none``); ``InputError`` for others."""
    cls = POLICIES.get(name)
    if cls is None:
        raise InputError(f'unknown CPU Manager policy "{name}" (expected one of: none, static)')
    return cls(topo, **kwargs)
