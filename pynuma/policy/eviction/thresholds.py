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
    from fractions import Fraction
    from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

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


GO_MIN_INT64 = -(1 << 63)


def go_int64(x: float) -> int:
    """Go's ``int64(x)`` of a float64 as the kubelet runs it (amd64): truncated toward zero.

    A NaN or a value out of the int64 range has no int64; amd64 gives the
    "integer indefinite" 0x8000000000000000 (-2**63).  A ``NaN%`` threshold
    (``strconv.ParseFloat`` accepts ``NaN``) is therefore -2**63: never met.
    """
    if x != x or not -9.223372036854775808e18 <= x < 9.223372036854775808e18:
        return GO_MIN_INT64
    return int(x)


@dataclass(frozen=True)
class ThresholdValue:
    """Either an absolute quantity or a fraction (float32) of the observed capacity."""

    quantity: Optional[Quantity] = None
    percentage: float = 0.0

    def amount(self, capacity: int) -> Union[int, Fraction]:
        """The exact threshold against ``capacity`` (kubelet ``GetThresholdQuantity``).

        A quantity is taken as it is (``500m`` stays a half: upstream adds and
        compares quantities exactly); a percentage is the kubelet's
        ``int64(float64(capacity) * float64(p))``, truncated.
        """
        if self.quantity is not None:
            return self.quantity.amount
        return go_int64(float(capacity) * self.percentage)

    def resolve(self, capacity: int) -> int:
        """The threshold in whole bytes/counts against ``capacity`` (a fractional quantity rounded up)."""
        if self.quantity is not None:
            return self.quantity.value()
        # int64(float64(capacity) * float64(float32 percentage)): truncated, float32-skewed on purpose.
        return go_int64(float(capacity) * self.percentage)

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


_CONTAINERFS_SOURCES = (NODEFS_AVAILABLE, NODEFS_INODES_FREE, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE)
_CONTAINERFS_SIGNALS = (CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE)


def _containerfs_writes(
    thresholds: Sequence[Threshold], dedicated_image_fs: bool, container_fs_separate: bool,
) -> Tuple[List[Tuple[Optional[int], Optional[Threshold]]], Optional[str]]:
    """What ``UpdateContainerFsThresholds`` writes, in its order, and the error it reports.

    Each write is ``(slot, threshold)``: ``slot`` the index of the user's
    containerfs threshold it overwrites, ``None`` for an append; ``threshold``
    ``None`` where upstream writes an empty threshold (no source to copy: no
    operator, never met).  Only two layouts act: images and writable layers on
    the same filesystem as each other (both on the root fs, or both apart from
    it: copy nodefs) and a dedicated image fs holding the writable layers too
    (copy imagefs).  Writable layers apart from images without a dedicated
    image fs changes nothing.
    """
    src: Dict[Tuple[str, bool], Threshold] = {}
    slots: Dict[Tuple[str, bool], int] = {}
    error = None
    for idx, t in enumerate(thresholds):
        key = (t.signal, t.is_hard)
        if t.signal in _CONTAINERFS_SOURCES:
            src[key] = t
        elif t.signal in _CONTAINERFS_SIGNALS:
            kind = "hard" if t.is_hard else "soft"
            error = f"found {t.signal} for {kind} eviction. ignoring"
            slots[key] = idx
    if dedicated_image_fs == container_fs_separate:
        bytes_src, inodes_src = NODEFS_AVAILABLE, NODEFS_INODES_FREE
    elif dedicated_image_fs:
        bytes_src, inodes_src = IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE
    else:
        return [], error
    writes: List[Tuple[Optional[int], Optional[Threshold]]] = []
    for target, source in ((CONTAINERFS_AVAILABLE, bytes_src), (CONTAINERFS_INODES_FREE, inodes_src)):
        for hard in (True, False):
            s = src.get((source, hard))
            derived = None if s is None else replace(s, signal=target, grace_period=0.0 if hard else s.grace_period)
            writes.append((slots.get((target, hard)), derived))
    return writes, error


def update_containerfs_thresholds(
    thresholds: Sequence[Threshold], dedicated_image_fs: bool, container_fs_separate: bool,
) -> Tuple[List[Threshold], Optional[str]]:
    """Derive the ``containerfs.*`` thresholds from the filesystem layout (``UpdateContainerFsThresholds``).

    Single filesystem or split (writable layers apart from images, both apart
    from the root fs): copy the nodefs thresholds; dedicated image fs only:
    copy the imagefs ones; writable layers apart from images on the root fs:
    nothing changes (upstream handles no such layout).  A user-supplied
    containerfs threshold is overwritten in place by the layouts that act,
    kept otherwise; it is reported (the last one) in the returned message
    either way.  A source threshold that does not exist yields no containerfs
    threshold (upstream adds an empty, never-met one).
    """
    out: List[Optional[Threshold]] = list(thresholds)
    writes, error = _containerfs_writes(thresholds, dedicated_image_fs, container_fs_separate)
    for slot, derived in writes:
        if slot is not None:
            out[slot] = derived
        elif derived is not None:
            out.append(derived)
    return [t for t in out if t is not None], error


def containerfs_first_pass_thresholds(
    thresholds: Sequence[Threshold], dedicated_image_fs: bool, container_fs_separate: bool,
    capacity: Optional[int] = None,
) -> List[Threshold]:
    """The thresholds the kubelet's *first* synchronize evaluates.

    ``synchronize`` takes ``thresholds := m.config.Thresholds`` before the
    first-time block, and there ``thresholds, err := UpdateContainerFsThresholds(...)``
    declares a new variable: the first pass evaluates the old slice.  It sees
    the overwrites of user-supplied containerfs thresholds that land in the
    shared backing array, i.e. those made before an append outgrows it
    (``capacity``: the Go capacity of the configured slice, ``None`` = its
    length, as for a slice literal), and none of the appended thresholds.
    Later passes (and node-level reclaim) use the full result of
    :func:`update_containerfs_thresholds`.
    """
    view: List[Optional[Threshold]] = list(thresholds)
    length = len(view)
    cap = length if capacity is None else max(capacity, length)
    writes, _ = _containerfs_writes(thresholds, dedicated_image_fs, container_fs_separate)
    for slot, derived in writes:
        if slot is not None:
            view[slot] = derived  # an empty threshold is never met: dropped
        elif length == cap:
            break  # this append moves the slice: later overwrites are not seen by this pass
        else:
            length += 1  # written past the old length: not seen by this pass
    return [t for t in view if t is not None]


# Go's malloc size classes up to 32 KiB; a slice of eviction Thresholds (64 bytes each) grows into them.
_GO_SIZE_CLASSES = (
    8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416,
    448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200,
    3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336,
    16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768,
)
_GO_THRESHOLD_SIZE = 64  # evictionapi.Threshold on 64-bit: two strings, ThresholdValue, Duration, pointer


def _go_append_capacity(length: int, cap: int, added: int) -> int:
    """Capacity after ``append(s, added elements...)`` of a ``[]evictionapi.Threshold`` (Go growslice)."""
    new_len = length + added
    if added == 0 or new_len <= cap:
        return cap
    new_cap = cap
    if new_len > 2 * cap:
        new_cap = new_len
    elif cap < 256:
        new_cap = 2 * cap
    else:
        while new_cap < new_len:
            new_cap += (new_cap + 3 * 256) >> 2
    size = new_cap * _GO_THRESHOLD_SIZE
    rounded = next((c for c in _GO_SIZE_CLASSES if c >= size), -(-size // 8192) * 8192)
    return rounded // _GO_THRESHOLD_SIZE


def threshold_config_capacity(hard: int, soft: int, allocatable_copies: int, enforce_pods: bool) -> int:
    """Go capacity of ``ParseThresholdConfig``'s result (``hard``/``soft`` thresholds parsed, copies added).

    Pass it as :attr:`~pynuma.policy.eviction.manager.EvictionConfig.thresholds_capacity`
    for thresholds that came from :func:`parse_threshold_config`.
    """
    cap = _go_append_capacity(0, 0, hard)
    cap = _go_append_capacity(hard, cap, soft)
    if enforce_pods:  # addAllocatableThresholds: append(append([]Threshold{}, thresholds...), additional...)
        n = hard + soft
        cap = _go_append_capacity(n, _go_append_capacity(0, 0, n), allocatable_copies)
    return cap


def thresholds_from_config(cfg: Mapping, defaults: Optional[Mapping[str, str]] = DEFAULT_EVICTION_HARD) -> List[Threshold]:
    """Thresholds from KubeletConfiguration-style maps (``evictionHard`` ... ``enforceNodeAllocatable``)."""
    return parse_threshold_config(
        cfg.get("enforceNodeAllocatable", [NODE_ALLOCATABLE_PODS]),
        cfg.get("evictionHard"), cfg.get("evictionSoft"), cfg.get("evictionSoftGracePeriod"),
        cfg.get("evictionMinimumReclaim"), defaults=defaults,
    )
