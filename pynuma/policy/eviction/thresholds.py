"""Eviction thresholds: the kubelet's flag and KubeletConfiguration syntax, defaults, derived thresholds.

>>> hard = parse_flags("memory.available<100Mi,nodefs.available<10%", "<")
>>> [str(t) for t in parse_threshold_config([], hard, None, None, None)]
['memory.available<100Mi', 'nodefs.available<10%']

Percentages are kept as float32 values, as upstream stores them, so that
"5% of 10Gi" is 536870920 bytes exactly like the kubelet computes it.
"""
from __future__ import annotations

from ..._dataclass import dataclass, replace
from ...errors import InputError
from ...quantity import Quantity
from .syntax import float32, parse_duration, parse_flags, parse_percentage  # noqa: F401 - re-exported
from .signals import (
    ALLOCATABLE_MEMORY_AVAILABLE, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE, IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE, MEMORY_AVAILABLE, NODEFS_AVAILABLE, NODEFS_INODES_FREE, OP_LESS_THAN, valid_signal,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

# pkg/kubelet/eviction/defaults_linux.go (imagefs.inodesFree joined the defaults in v1.29).
DEFAULT_EVICTION_HARD: Dict[str, str] = {
    MEMORY_AVAILABLE: "100Mi",
    NODEFS_AVAILABLE: "10%",
    NODEFS_INODES_FREE: "5%",
    IMAGEFS_AVAILABLE: "15%",
    IMAGEFS_INODES_FREE: "5%",
}
# Older kubelets (before imagefs.inodesFree was defaulted), as a cheap option.
LEGACY_DEFAULT_EVICTION_HARD: Dict[str, str] = {
    k: v for k, v in DEFAULT_EVICTION_HARD.items() if k != IMAGEFS_INODES_FREE
}
NODE_ALLOCATABLE_PODS = "pods"


@dataclass(frozen=True)
class ThresholdValue:
    """Either an absolute quantity or a fraction (float32) of the observed capacity."""

    quantity: Optional[Quantity] = None
    percentage: float = 0.0

    def resolve(self, capacity: int) -> int:
        """The threshold in bytes/counts against ``capacity`` (kubelet ``GetThresholdQuantity``)."""
        if self.quantity is not None:
            return self.quantity.value()
        # int64(float64(capacity) * float64(float32 percentage)): truncated, float32-skewed on purpose.
        return int(float(capacity) * self.percentage)

    def resolve_quantity(self, capacity: int) -> Quantity:
        """Like :meth:`resolve` but as the quantity the kubelet prints in messages."""
        if self.quantity is not None:
            return self.quantity
        return Quantity(self.resolve(capacity), "BinarySI")

    def __str__(self) -> str:
        if self.quantity is not None:
            return str(self.quantity)
        return f"{self.percentage * 100:.6g}%"

    def to_dict(self) -> dict:
        if self.quantity is not None:
            return {"quantity": str(self.quantity)}
        return {"percentage": self.percentage}

    @classmethod
    def from_dict(cls, raw: Mapping) -> "ThresholdValue":
        if "quantity" in raw and raw["quantity"] is not None:
            return cls(quantity=Quantity.parse(raw["quantity"]))
        return cls(percentage=float32(float(raw.get("percentage", 0.0))))


@dataclass(frozen=True)
class Threshold:
    """One eviction threshold; ``grace_period`` 0 means hard (evict at once)."""

    signal: str
    value: ThresholdValue
    grace_period: float = 0.0
    min_reclaim: Optional[ThresholdValue] = None
    operator: str = OP_LESS_THAN

    @property
    def is_hard(self) -> bool:
        return self.grace_period == 0

    def __str__(self) -> str:
        text = f"{self.signal}<{self.value}"
        if not self.is_hard:
            text += f" (grace {self.grace_period:g}s)"
        return text

    def to_dict(self) -> dict:
        return {
            "signal": self.signal,
            "operator": self.operator,
            "value": self.value.to_dict(),
            "grace_period_s": self.grace_period,
            "min_reclaim": self.min_reclaim.to_dict() if self.min_reclaim is not None else None,
        }

    @classmethod
    def from_dict(cls, raw: Mapping) -> "Threshold":
        mr = raw.get("min_reclaim")
        return cls(
            signal=raw["signal"],
            operator=raw.get("operator", OP_LESS_THAN),
            value=ThresholdValue.from_dict(raw.get("value") or {}),
            grace_period=float(raw.get("grace_period_s") or 0),
            min_reclaim=ThresholdValue.from_dict(mr) if mr is not None else None,
        )


QUANTITY_FORMAT_ERROR = ("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


# KubeletConfiguration key -> kubelet flag of each eviction setting
SETTING_FLAGS: Dict[str, str] = {
    "evictionHard": "--eviction-hard", "evictionSoft": "--eviction-soft",
    "evictionSoftGracePeriod": "--eviction-soft-grace-period", "evictionMinimumReclaim": "--eviction-minimum-reclaim",
}
_SETTING_SEP = {"evictionHard": "<", "evictionSoft": "<", "evictionSoftGracePeriod": "=",
                "evictionMinimumReclaim": "="}


class ThresholdError(InputError):
    """An eviction setting the kubelet rejects.

    ``str()`` is the kubelet's own message (what its tests compare); the
    attributes say where it came from, so a command can name the flag or
    configuration key and the offending value (:meth:`describe`).
    """

    def __init__(self, message: str, setting: str, signal: str, value: Optional[str]) -> None:
        super().__init__(message)
        self.setting, self.signal, self.value = setting, signal, value

    def describe(self, source: Optional[str] = None) -> str:
        """One line naming the setting and value: ``--eviction-hard memory.available<abc: ...``.

        ``source``: the file the setting came from (then the configuration key
        is named, ``kubelet.yaml: evictionHard[memory.available]: ...``);
        ``None``: the kubelet flag.
        """
        kubelet = str(self)
        value = None if self.value is None else _cut(self.value)  # a long value is shown cut: one short line
        signal = _cut(self.signal)
        if value is None and self.setting == "evictionSoftGracePeriod":
            if source is not None:
                return f"{source}: evictionSoft[{signal}]: no grace period (evictionSoftGracePeriod) for it"
            return (f"--eviction-soft {signal}: no grace period for it "
                    f"(add --eviction-soft-grace-period {signal}=DURATION)")
        if kubelet == QUANTITY_FORMAT_ERROR:
            detail = f"{value!r} is neither a quantity nor a percentage (e.g. 100Mi, 1.5Gi, 10%)"
        elif kubelet.startswith("strconv.ParseFloat"):
            detail = f"{value!r} is not a percentage (e.g. 10%)"
        elif kubelet.startswith("time: "):
            detail = f"{value!r} is not a duration (e.g. 30s, 1m30s, 2h)"
        elif kubelet.startswith("unsupported eviction signal"):
            from .signals import SIGNALS

            detail = f"unknown signal {signal!r} (one of: {', '.join(SIGNALS)})"
        else:
            detail = kubelet
        if source is not None:
            return f"{source}: {self.setting}[{signal}]: {detail}"
        shown = signal if value is None else f"{signal}{_SETTING_SEP[self.setting]}{value}"
        return f"{SETTING_FLAGS[self.setting]} {shown}: {detail}"


def _statements(setting: str, statements: Optional[Mapping[str, str]], parse_one):
    """``parse_one(signal, value)`` over a map, each failure a :class:`ThresholdError` naming its statement."""
    for signal, value in (statements or {}).items():
        try:
            yield signal, parse_one(signal, value)
        except ThresholdError:
            raise
        except InputError as err:
            raise ThresholdError(str(err), setting, signal, value) from None


def _cut(text: str) -> str:
    """An unknown signal as the kubelet's message names it, cut when long (one short line)."""
    return text if len(text) <= 64 else f"{text[:56]}... ({len(text)} characters)"


def _parse_quantity(text: str) -> Quantity:
    try:
        return Quantity.parse(text)
    except InputError:
        raise InputError(QUANTITY_FORMAT_ERROR) from None  # resource.ParseQuantity's ErrFormatWrong


def parse_threshold_statement(signal: str, value: str) -> Optional[Threshold]:
    """One ``signal<value`` statement; ``None`` for the ignored ``0%`` / ``100%``."""
    if not valid_signal(signal):
        raise InputError(f"unsupported eviction signal {_cut(signal)}")
    if value.endswith("%"):
        if value in ("0%", "100%"):
            return None
        p = parse_percentage(value)
        if p < 0:
            raise InputError(f"eviction percentage threshold {signal} must be >= 0%: {_cut(value)}")
        if p > 1:
            raise InputError(f"eviction percentage threshold {signal} must be <= 100%: {_cut(value)}")
        return Threshold(signal, ThresholdValue(percentage=p))
    q = _parse_quantity(value)
    if q.amount <= 0:
        raise InputError(f"eviction threshold {signal} must be positive: {q}")
    return Threshold(signal, ThresholdValue(quantity=q))


def parse_threshold_statements(statements: Optional[Mapping[str, str]],
                               setting: str = "evictionHard") -> List[Threshold]:
    """Thresholds of one ``evictionHard``/``evictionSoft`` map; :class:`ThresholdError` naming the bad one."""
    return [t for _, t in _statements(setting, statements, parse_threshold_statement) if t is not None]


def _grace_period(signal: str, value: str) -> float:
    if not valid_signal(signal):
        raise InputError(f"unsupported eviction signal {_cut(signal)}")
    period = parse_duration(value)
    if period < 0:
        raise InputError(f"invalid eviction grace period specified: {value}, must be a positive value")
    return period


def parse_grace_periods(statements: Optional[Mapping[str, str]]) -> Dict[str, float]:
    return dict(_statements("evictionSoftGracePeriod", statements, _grace_period))


def _minimum_reclaim(signal: str, value: str) -> ThresholdValue:
    if not valid_signal(signal):
        raise InputError(f"unsupported eviction signal {_cut(signal)}")
    if value.endswith("%"):
        p = parse_percentage(value)
        if p <= 0:
            raise InputError(f"eviction percentage minimum reclaim {signal} must be positive: {_cut(value)}")
        return ThresholdValue(percentage=p)
    q = _parse_quantity(value)
    if q.amount < 0:
        raise InputError(f"negative eviction minimum reclaim specified for {signal}")
    return ThresholdValue(quantity=q)


def parse_minimum_reclaims(statements: Optional[Mapping[str, str]]) -> Dict[str, ThresholdValue]:
    return dict(_statements("evictionMinimumReclaim", statements, _minimum_reclaim))


def parse_threshold_config(
    enforce_node_allocatable: Iterable[str],
    hard: Optional[Mapping[str, str]],
    soft: Optional[Mapping[str, str]],
    soft_grace_period: Optional[Mapping[str, str]],
    minimum_reclaim: Optional[Mapping[str, str]],
    defaults: Optional[Mapping[str, str]] = DEFAULT_EVICTION_HARD,
) -> List[Threshold]:
    """All thresholds of a kubelet configuration (``ParseThresholdConfig``).

    ``hard=None`` means "not configured" and takes ``defaults`` (the Linux
    defaults); any given map replaces them wholesale.  Errors carry the
    kubelet's own wording.
    """
    if hard is None:
        hard = defaults
    results = parse_threshold_statements(hard, "evictionHard")
    softs = parse_threshold_statements(soft, "evictionSoft")
    graces = parse_grace_periods(soft_grace_period)
    reclaims = parse_minimum_reclaims(minimum_reclaim)
    for i, t in enumerate(softs):
        if t.signal not in graces:
            raise ThresholdError(f"grace period must be specified for the soft eviction threshold {t.signal}",
                                 "evictionSoftGracePeriod", t.signal, None)
        softs[i] = replace(t, grace_period=graces[t.signal])
    results += softs
    results = [replace(t, min_reclaim=reclaims[t.signal]) if t.signal in reclaims else t for t in results]
    if NODE_ALLOCATABLE_PODS in list(enforce_node_allocatable or ()):
        results = add_allocatable_thresholds(results)
    return results


def add_allocatable_thresholds(thresholds: Sequence[Threshold]) -> List[Threshold]:
    """Copy every hard ``memory.available`` threshold as ``allocatableMemory.available``."""
    extra = [Threshold(ALLOCATABLE_MEMORY_AVAILABLE, t.value, 0.0, t.min_reclaim, t.operator)
             for t in thresholds if t.signal == MEMORY_AVAILABLE and t.is_hard]
    return list(thresholds) + extra


def update_containerfs_thresholds(
    thresholds: Sequence[Threshold], dedicated_image_fs: bool, container_fs_separate: bool,
) -> Tuple[List[Threshold], Optional[str]]:
    """Derive the ``containerfs.*`` thresholds from the filesystem layout (``UpdateContainerFsThresholds``).

    Single filesystem or split (writable layers apart from images): copy the
    nodefs thresholds; dedicated image fs only: copy the imagefs ones.  A
    user-supplied containerfs threshold is overwritten in place and reported
    (the last one) in the returned message.  A source threshold that does not
    exist yields no containerfs threshold (upstream adds an empty, never-met one).
    """
    out = list(thresholds)
    src: Dict[Tuple[str, bool], Threshold] = {}
    slots: Dict[Tuple[str, bool], int] = {}
    error = None
    for idx, t in enumerate(out):
        key = (t.signal, t.is_hard)
        if t.signal in (NODEFS_AVAILABLE, NODEFS_INODES_FREE, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE):
            src[key] = t
        elif t.signal in (CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE):
            kind = "hard" if t.is_hard else "soft"
            error = f"found {t.signal} for {kind} eviction. ignoring"
            slots[key] = idx
    if dedicated_image_fs and not container_fs_separate:
        bytes_src, inodes_src = IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE
    else:
        bytes_src, inodes_src = NODEFS_AVAILABLE, NODEFS_INODES_FREE
    removed = []
    for target, source in ((CONTAINERFS_AVAILABLE, bytes_src), (CONTAINERFS_INODES_FREE, inodes_src)):
        for hard in (True, False):
            s = src.get((source, hard))
            derived = None if s is None else replace(s, signal=target, grace_period=0.0 if hard else s.grace_period)
            slot = slots.get((target, hard))
            if slot is not None:
                if derived is None:
                    removed.append(slot)
                else:
                    out[slot] = derived
            elif derived is not None:
                out.append(derived)
    out = [t for i, t in enumerate(out) if i not in removed]
    return out, error


def thresholds_from_config(cfg: Mapping, defaults: Optional[Mapping[str, str]] = DEFAULT_EVICTION_HARD) -> List[Threshold]:
    """Thresholds from KubeletConfiguration-style maps (``evictionHard`` ... ``enforceNodeAllocatable``)."""
    return parse_threshold_config(
        cfg.get("enforceNodeAllocatable", [NODE_ALLOCATABLE_PODS]),
        cfg.get("evictionHard"), cfg.get("evictionSoft"), cfg.get("evictionSoftGracePeriod"),
        cfg.get("evictionMinimumReclaim"), defaults=defaults,
    )
