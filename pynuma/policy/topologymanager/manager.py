"""The Topology Manager: policy options, feature gates, scopes and pod admission.

>>> from pynuma.policy.topologymanager.numa_info import NUMAInfo
>>> tm = TopologyManager.create(NUMAInfo.from_matrix([0, 1], None), "restricted", "container")
>>> tm.policy.name, tm.scope
('restricted', 'container')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ...errors import InputError, PynumaError
from .hints import HintProvider, ProviderHints, TopologyHint
from .numa_info import NUMAInfo
from .policies import NONE, Policy, TopologyAffinityError, make_policy

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8

ALPHA_GATE = "TopologyManagerPolicyAlphaOptions"
BETA_GATE = "TopologyManagerPolicyBetaOptions"
DEFAULT_GATES = {ALPHA_GATE: False, BETA_GATE: True}  # beta gates on, alpha off (kubelet defaults)

ALPHA_OPTIONS: frozenset = frozenset()
BETA_OPTIONS = frozenset({MAX_ALLOWABLE_NUMA_NODES})
STABLE_OPTIONS = frozenset({PREFER_CLOSEST_NUMA_NODES})

CONTAINER_SCOPE = "container"
POD_SCOPE = "pod"
SCOPES = (CONTAINER_SCOPE, POD_SCOPE)
NONE_SCOPE = "none"  # the kubelet's scope for policy "none" (whatever scope was configured)

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


@dataclass(frozen=True)
class TopologyManagerOptions:
    """Parsed ``topologyManagerPolicyOptions``."""

    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def _gates(feature_gates: Optional[Mapping[str, bool]]) -> Dict[str, bool]:
    gates = dict(DEFAULT_GATES)
    gates.update(feature_gates or {})
    return gates


def check_option_available(option: str, feature_gates: Optional[Mapping[str, bool]] = None) -> None:
    """``InputError`` (kubelet wording) unless ``option`` is known and its maturity gate is on."""
    gates = _gates(feature_gates)
    if option not in ALPHA_OPTIONS | BETA_OPTIONS | STABLE_OPTIONS:
        raise InputError(f'unknown Topology Manager Policy option: "{option}"')
    if option in ALPHA_OPTIONS and not gates.get(ALPHA_GATE):
        raise InputError(f'topology manager policy alpha-level options not enabled, but option "{option}" provided')
    if option in BETA_OPTIONS and not gates.get(BETA_GATE):
        raise InputError(f'topology manager policy beta-level options not enabled, but option "{option}" provided')


def option_available(option: str, feature_gates: Optional[Mapping[str, bool]] = None) -> bool:
    """Whether ``option`` would be accepted under ``feature_gates``."""
    try:
        check_option_available(option, feature_gates)
    except InputError:
        return False
    return True


def _parse_bool(name: str, value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    from ..gotext import strconv_quote

    raise InputError(f'bad value for option "{name}": strconv.ParseBool: parsing {strconv_quote(value)}: invalid syntax')


def _parse_int(name: str, value: str) -> int:
    text = value[1:] if value[:1] in "+-" else value
    from ..gotext import strconv_quote

    shown = strconv_quote(value)
    if not text.isdigit() or not text.isascii():
        raise InputError(f'unable to convert policy option to integer "{name}": '
                         f'strconv.Atoi: parsing {shown}: invalid syntax')
    # Go's int is 64 bits; checking the length first never converts thousands of digits
    if len(text.lstrip("0")) > 19 or not -(1 << 63) <= int(value) < 1 << 63:
        raise InputError(f'unable to convert policy option to integer "{name}": '
                         f'strconv.Atoi: parsing {shown}: value out of range')
    return int(value)


def parse_options(options: Optional[Mapping[str, str]],
                  feature_gates: Optional[Mapping[str, bool]] = None) -> TopologyManagerOptions:
    """Parse the kubelet's ``topologyManagerPolicyOptions`` string map; ``InputError`` on bad input."""
    prefer = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted(options or {}):
        value = str((options or {})[name])
        check_option_available(name, feature_gates)
        if name == PREFER_CLOSEST_NUMA_NODES:
            prefer = _parse_bool(name, value)
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            max_nodes = _parse_int(name, value)
            if max_nodes < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise InputError(f'the minimum value of "{MAX_ALLOWABLE_NUMA_NODES}" should not be less than '
                                 f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}")
    return TopologyManagerOptions(prefer, max_nodes)


@dataclass
class ContainerDecision:
    """What the manager decided for one container (or, in pod scope, the pod)."""

    container: str
    provider_hints: List[ProviderHints]
    hint: TopologyHint
    admit: bool
    exact: bool = True  # False: a huge machine's merge fell back to the bounded search


@dataclass
class AdmitResult:
    """Pod admission outcome: ``admit``, the kubelet's ``reason`` when rejected, per-container decisions."""

    admit: bool
    reason: str = ""
    message: str = ""
    decisions: List[ContainerDecision] = field(default_factory=list)

    def hint_for(self, container: str) -> Optional[TopologyHint]:
        for d in self.decisions:
            if d.container == container or d.container == "*":
                return d.hint
        return None


class TopologyManager:
    """A policy, a scope and the options, built like the kubelet's ``NewManager``."""

    def __init__(self, info: NUMAInfo, policy: Policy, scope: str, options: TopologyManagerOptions) -> None:
        self.info = info
        self.policy = policy
        self.scope = scope
        self.options = options

    @classmethod
    def create(cls, info: NUMAInfo, policy: str, scope: str = CONTAINER_SCOPE,
               options: Optional[Mapping[str, str]] = None,
               feature_gates: Optional[Mapping[str, bool]] = None) -> "TopologyManager":
        """Validate like the kubelet's ``NewManager``: options, distances, node count, policy name, scope name.

        Policy ``none`` comes first and skips all of it, as the kubelet short-circuits:
        the configured scope and options are never looked at, and the manager's scope is ``none``.
        """
        if policy == NONE:
            return cls(info, make_policy(NONE, info), NONE_SCOPE, TopologyManagerOptions())
        opts = parse_options(options, feature_gates)
        if opts.prefer_closest_numa and not info.has_distances:
            raise InputError("cannot discover NUMA topology: error getting NUMA distances from cadvisor")
        if policy != NONE and len(info.nodes) > opts.max_allowable_numa_nodes:
            raise InputError(f"unsupported on machines with more than {opts.max_allowable_numa_nodes} NUMA Nodes")
        pol = make_policy(policy, info, opts.prefer_closest_numa)
        if scope not in SCOPES:
            raise InputError(f'unknown scope: "{scope}"')
        return cls(info, pol, scope, opts)

    def merge(self, providers_hints: Sequence[ProviderHints]) -> Tuple[TopologyHint, bool]:
        """Merge one set of provider answers with the policy."""
        return self.policy.merge(providers_hints)

    def merge_ex(self, providers_hints: Sequence[ProviderHints]) -> Tuple[TopologyHint, bool, bool]:
        """:meth:`merge` plus whether the answer is exact (see ``Policy.merge_ex``)."""
        return self.policy.merge_ex(providers_hints)

    def admit(self, pod: Any, providers: Sequence[HintProvider], allocate=None) -> AdmitResult:
        """Admit ``pod``: per container (container scope) or once (pod scope).

        ``allocate(container, hint)``, if given, is called for each admitted
        container in order (init containers first), as the kubelet lets the
        providers allocate right after a container's hint is stored.  An
        allocation failure rejects the pod: reason ``SMTAlignmentError`` (or
        the error's ``reason``) when it has a kubelet type, else
        ``UnexpectedAdmissionError``, as the kubelet's admission result does.
        """
        containers = list(pod.init_containers) + list(pod.containers)
        result = AdmitResult(True)
        if self.policy.name == NONE:  # the no-op scope: no hints, everyone admitted
            for c in containers:
                result.decisions.append(ContainerDecision(c.name, [], TopologyHint(None, False), True))
                if not self._allocate(allocate, c, TopologyHint(None, False), result):
                    break
            return result
        if self.scope == POD_SCOPE:
            answers = [p.pod_hints(pod) for p in providers]
            hint, ok, exact = self.merge_ex(answers)
            result.decisions.append(ContainerDecision("*", answers, hint, ok, exact))
            if not ok:
                return self._reject(result)
            for c in containers:
                if not self._allocate(allocate, c, hint, result):
                    break
            return result
        for c in containers:
            answers = [p.hints(pod, c) for p in providers]
            hint, ok, exact = self.merge_ex(answers)
            result.decisions.append(ContainerDecision(c.name, answers, hint, ok, exact))
            if not ok:
                return self._reject(result)
            if not self._allocate(allocate, c, hint, result):
                break
        return result

    @staticmethod
    def _allocate(allocate, container, hint: TopologyHint, result: AdmitResult) -> bool:
        if allocate is None:
            return True
        try:
            allocate(container, hint)
        except PynumaError as err:
            result.admit = False
            result.reason = getattr(err, "reason", None) or (
                type(err).__name__ if type(err).__name__ == "SMTAlignmentError" else "UnexpectedAdmissionError")
            result.message = f"Allocate failed due to {err}, which is unexpected" \
                if result.reason == "UnexpectedAdmissionError" else str(err)
            return False
        return True

    @staticmethod
    def _reject(result: AdmitResult) -> AdmitResult:
        err = TopologyAffinityError()
        result.admit = False
        result.reason = err.reason
        result.message = str(err)
        return result
