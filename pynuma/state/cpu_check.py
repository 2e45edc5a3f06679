"""Explain why a ``cpu_manager_state`` no longer fits the machine or the policy, and propose a fix.

The kubelet refuses to start on such a file and only says "delete it".
:func:`check_cpu_state` lists every mismatch (CPUs that no longer exist,
overlapping assignments, reserved CPUs in the wrong place, CPUs missing from
the state, the policy name) and builds a corrected state: CPUs that are gone
are dropped, an overlap is kept by the first container (sorted by pod UID,
then name), CPUs the state forgot go back to the shared pool.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..cpuset import CPUSet
from ..policy.cpumanager.static_policy import CPUState


class Finding:
    """One mismatch: a short code, a sentence, and where it is."""

    __slots__ = ("code", "message", "pod", "container", "cpus")

    def __init__(self, code: str, message: str, pod: Optional[str] = None, container: Optional[str] = None,
                 cpus: Optional[CPUSet] = None) -> None:
        self.code, self.message, self.pod, self.container, self.cpus = code, message, pod, container, cpus

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.pod is not None:
            out["pod"] = self.pod
        if self.container is not None:
            out["container"] = self.container
        if self.cpus is not None:
            out["cpus"] = str(self.cpus)
        return out

    def __repr__(self) -> str:
        return f"Finding({self.code}: {self.message})"


class CheckReport:
    """Findings, the kubelet's own verdict, and the corrected state (``None`` when it cannot be fixed)."""

    __slots__ = ("findings", "kubelet_error", "fixed_policy", "fixed", "unfixable")

    def __init__(self) -> None:
        self.findings: List[Finding] = []
        self.kubelet_error: Optional[str] = None
        self.fixed_policy: str = ""
        self.fixed: Optional[CPUState] = None
        self.unfixable: List[str] = []

    @property
    def ok(self) -> bool:
        return not self.findings and self.kubelet_error is None


def _rows(assignments):
    return [(p, c, s) for p in sorted(assignments) for c, s in sorted(assignments[p].items())]


def check_cpu_state(policy_name: str, state: CPUState, policy) -> CheckReport:
    """Compare a stored state (``policy_name`` + ``state``) with ``policy`` (a static or none policy).

    Pure: nothing is read or written.  ``policy.topo`` is the machine;
    ``policy.reserved`` and its strict-reservation option come from the
    caller's kubelet configuration.
    """
    r = CheckReport()
    r.fixed_policy = policy.name
    if policy_name != policy.name:
        r.findings.append(Finding("policy", f'the state was written by policy "{policy_name}" but the '
                                            f'configured policy is "{policy.name}"'))
        r.kubelet_error = (f'configured policy "{policy.name}" differs from state checkpoint '
                           f'policy "{policy_name}"')
    if policy.name != "static":
        # The none policy keeps no CPUs: a clean state is an empty one.
        if state.assignments:
            r.findings.append(Finding("entries", f"{len(_rows(state.assignments))} exclusive assignment(s) "
                                                 f"are meaningless under the none policy"))
        r.fixed = CPUState(CPUSet(), {})
        return r
    topo = policy.topo
    machine = topo.cpus()
    strict = policy.options.strict_cpu_reservation
    reserved = policy.reserved
    all_cpus = policy.all_cpus()
    default = state.default
    if not default and not state.assignments:
        r.fixed = CPUState(all_cpus, {})  # the kubelet initialises an empty state itself
        return r
    gone = default - machine
    if gone:
        r.findings.append(Finding("unknown-cpus", f"the default cpuset holds CPUs {gone} that this machine "
                                                  f"does not have (it has {machine})", cpus=gone))
    claimed = CPUSet()
    owner: Dict[int, tuple] = {}
    fixed: Dict[str, Dict[str, CPUSet]] = {}
    for pod, name, cset in _rows(state.assignments):
        where = f"pod {pod} container {name}"
        missing = cset - machine
        if missing:
            r.findings.append(Finding("unknown-cpus", f"{where} holds CPUs {missing} that this machine does "
                                                      f"not have", pod, name, missing))
        both = cset & default
        if both:
            r.findings.append(Finding("overlap-default", f"{where} holds CPUs {both} that are also in the "
                                                         f"default (shared) cpuset", pod, name, both))
        dup = cset & claimed
        if dup:
            others = sorted({owner[c] for c in dup})
            names = ", ".join(f"pod {p} container {c}" for p, c in others)
            r.findings.append(Finding("overlap", f"{where} holds CPUs {dup} already assigned to {names}",
                                      pod, name, dup))
        bad_reserved = cset & reserved
        if bad_reserved:
            r.findings.append(Finding("reserved", f"{where} holds reserved CPUs {bad_reserved}", pod, name,
                                      bad_reserved))
        keep = (cset & machine) - claimed - reserved
        for c in keep:
            owner[c] = (pod, name)
        claimed = claimed | keep
        if keep:
            fixed.setdefault(pod, {})[name] = keep
    if strict:
        wrong = reserved & default
        if wrong:
            r.findings.append(Finding("reserved", f"strictly reserved CPUs {wrong} are in the default cpuset",
                                      cpus=wrong))
    else:
        absent = reserved - default
        if absent:
            r.findings.append(Finding("reserved", f"reserved CPUs {absent} are not in the default cpuset "
                                                  f"{default or '(empty)'}", cpus=absent))
    known = (default | state.assigned()) & machine
    forgotten = all_cpus - known
    if forgotten:
        r.findings.append(Finding("missing-cpus", f"CPUs {forgotten} of this machine are in neither the "
                                                  f"default cpuset nor any assignment", cpus=forgotten))
    if not default and state.assignments:
        r.findings.append(Finding("empty-default", "the default cpuset is empty while containers hold CPUs"))
    if r.kubelet_error is None:
        r.kubelet_error = policy.validate(state.copy())
    new_default = all_cpus - claimed
    if not new_default and fixed:
        r.unfixable.append("every CPU would be exclusively assigned: the shared pool would be empty")
        return r
    r.fixed = CPUState(new_default, fixed)
    return r
