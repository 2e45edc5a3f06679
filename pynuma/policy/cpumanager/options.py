"""CPU Manager static-policy options (``--cpu-manager-policy-options``) as the kubelet parses them.

Options are given as strings (``{"full-pcpus-only": "true"}``) and parsed
as Go booleans.  Alpha and beta options need the
``CPUManagerPolicyAlphaOptions`` / ``CPUManagerPolicyBetaOptions`` feature
gates (alpha off, beta on by default, as in the kubelet).

>>> parse_options({"full-pcpus-only": "true"}).full_pcpus_only
True
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional

from ...errors import InputError

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION = "strict-cpu-reservation"
PREFER_ALIGN_BY_UNCORE = "prefer-align-cpus-by-uncorecache"

ALPHA = frozenset({ALIGN_BY_SOCKET, DISTRIBUTE_ACROSS_CORES})
BETA = frozenset({DISTRIBUTE_ACROSS_NUMA, STRICT_CPU_RESERVATION, PREFER_ALIGN_BY_UNCORE})
STABLE = frozenset({FULL_PCPUS_ONLY})
ALL_OPTIONS = ALPHA | BETA | STABLE

ALPHA_GATE = "CPUManagerPolicyAlphaOptions"
BETA_GATE = "CPUManagerPolicyBetaOptions"
DEFAULT_GATES = {ALPHA_GATE: False, BETA_GATE: True}
ALL_GATES_ON = {ALPHA_GATE: True, BETA_GATE: True}

# Pairs the kubelet refuses together (first, second), in the order it checks them.
INCOMPATIBLE = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_ACROSS_CORES),
    (DISTRIBUTE_ACROSS_NUMA, DISTRIBUTE_ACROSS_CORES),
    (PREFER_ALIGN_BY_UNCORE, DISTRIBUTE_ACROSS_CORES),
    (PREFER_ALIGN_BY_UNCORE, DISTRIBUTE_ACROSS_NUMA),
)

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def parse_go_bool(text: str) -> bool:
    """Go's ``strconv.ParseBool``; ``ValueError`` with Go's wording on anything else."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    from ..gotext import strconv_quote

    raise ValueError(f"strconv.ParseBool: parsing {strconv_quote(text)}: invalid syntax")


def _gates(feature_gates: Optional[Mapping[str, bool]]) -> Dict[str, bool]:
    gates = dict(DEFAULT_GATES)
    gates.update(feature_gates or {})
    return gates


def check_option_available(name: str, feature_gates: Optional[Mapping[str, bool]] = None) -> None:
    """Raise :class:`InputError` when ``name`` is unknown or its feature gate is off."""
    gates = _gates(feature_gates)
    if name not in ALL_OPTIONS:
        raise InputError(f'unknown CPU Manager Policy option: "{name}"')
    if name in ALPHA and not gates.get(ALPHA_GATE):
        raise InputError(f'CPU Manager Policy Alpha-level Options not enabled, but option "{name}" provided')
    if name in BETA and not gates.get(BETA_GATE):
        raise InputError(f'CPU Manager Policy Beta-level Options not enabled, but option "{name}" provided')


def option_available(name: str, feature_gates: Optional[Mapping[str, bool]] = None) -> bool:
    """Whether the kubelet would accept option ``name`` under ``feature_gates``."""
    try:
        check_option_available(name, feature_gates)
    except InputError:
        return False
    return True


class CPUManagerOptions:
    """Parsed static-policy options (all off by default)."""

    __slots__ = ("flags",)

    def __init__(self, flags: Optional[Mapping[str, bool]] = None) -> None:
        object.__setattr__(self, "flags", {k: bool(v) for k, v in (flags or {}).items() if k in ALL_OPTIONS})

    def __setattr__(self, name, value):
        raise AttributeError("CPUManagerOptions is immutable")

    def enabled(self, name: str) -> bool:
        return self.flags.get(name, False)

    full_pcpus_only = property(lambda self: self.enabled(FULL_PCPUS_ONLY))
    distribute_cpus_across_numa = property(lambda self: self.enabled(DISTRIBUTE_ACROSS_NUMA))
    align_by_socket = property(lambda self: self.enabled(ALIGN_BY_SOCKET))
    distribute_cpus_across_cores = property(lambda self: self.enabled(DISTRIBUTE_ACROSS_CORES))
    strict_cpu_reservation = property(lambda self: self.enabled(STRICT_CPU_RESERVATION))
    prefer_align_cpus_by_uncorecache = property(lambda self: self.enabled(PREFER_ALIGN_BY_UNCORE))

    def as_flags(self) -> Dict[str, bool]:
        """``{option name: True}`` for every option that is on (the form the allocator takes)."""
        return {k: True for k, v in sorted(self.flags.items()) if v}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CPUManagerOptions) and self.as_flags() == other.as_flags()

    def __hash__(self) -> int:
        return hash(tuple(self.as_flags()))

    def __repr__(self) -> str:
        return f"CPUManagerOptions({self.as_flags()})"


def parse_options(raw: Optional[Mapping[str, str]],
                  feature_gates: Optional[Mapping[str, bool]] = None) -> CPUManagerOptions:
    """Parse the kubelet's option map; :class:`InputError` with the kubelet's message on bad input."""
    flags: Dict[str, bool] = {}
    for name, value in sorted((raw or {}).items()):
        check_option_available(name, feature_gates)
        try:
            flags[name] = parse_go_bool(value if isinstance(value, str) else str(value))
        except ValueError as err:
            raise InputError(f'bad value for option "{name}": {err}') from None
    check_combination(flags)
    return CPUManagerOptions(flags)


def check_combination(flags: Mapping[str, bool]) -> None:
    """Refuse two options that cannot be on together (``NewStaticPolicyOptions``), with its message."""
    for a, b in INCOMPATIBLE:
        if flags.get(a) and flags.get(b):
            raise InputError(f"static policy options {a} and {b} can not be used at the same time")


def options_from_flags(flags: Optional[Mapping[str, bool]]) -> CPUManagerOptions:
    """Options from ``{name: on}`` as the static policy takes them: an unknown name or two options that
    exclude each other is :class:`InputError` with the kubelet's message (feature gates are not asked)."""
    for name in sorted(flags or {}):
        if name not in ALL_OPTIONS:
            raise InputError(f'unknown CPU Manager Policy option: "{name}"')
    check_combination({k: bool(v) for k, v in (flags or {}).items()})
    return CPUManagerOptions(flags)


def validate_options(opts: CPUManagerOptions, topo, topology_manager_policy: Optional[str] = None) -> None:
    """The checks the static policy makes against the machine and the Topology Manager policy."""
    if opts.align_by_socket:
        if topology_manager_policy == "single-numa-node":
            raise InputError("Topolgy manager single-numa-node policy is incompatible with CPUManager "
                             "align-by-socket policy option")
        if topo.num_sockets > topo.num_numa_nodes:
            raise InputError("Align by socket is not compatible with hardware where number of sockets "
                             "are more than number of NUMA")
