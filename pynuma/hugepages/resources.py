"""Hugepages as Kubernetes resources: names, page sizes, validation, capacity.

>>> hugepage_resource_name(2 * 1024 * 1024)
'hugepages-2Mi'
>>> page_size_from_resource_name("hugepages-1Gi").value()
1073741824

The rules follow the API server and kubelet helpers (``pkg/apis/core/helper``,
``pkg/apis/core/validation``, ``pkg/kubelet/cadvisor``): a hugepage resource is
``hugepages-`` + a quantity; requests must equal limits (hugepages never
overcommit); values are whole multiples of the page size; a container that asks
for hugepages must also ask for cpu or memory.
"""
from __future__ import annotations

from .._dataclass import dataclass
from ..errors import InputError
from ..quantity import BINARY_SI, Quantity

PREFIX = "hugepages-"
# Resources whose requests may be lower than their limits (``IsOvercommitAllowed``:
# native resources except hugepages; extended resources never overcommit).
_QOS_COMPUTE = ("cpu", "memory")

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Iterable, List, Mapping, Optional, Tuple, Union

    QuantityLike = Union[Quantity, str, int]


def is_hugepage_resource_name(name: str) -> bool:
    """Whether ``name`` names a hugepage resource (prefix ``hugepages-``)."""
    return isinstance(name, str) and name.startswith(PREFIX)


def hugepage_resource_name(page_size: QuantityLike) -> str:
    """``hugepages-<size>`` with the size in canonical binary form (2097152 -> ``2Mi``).

    Page sizes are byte counts, which the kubelet always builds as binary
    quantities, so a whole number of bytes prints as ``2Mi``/``1Gi``/``64Ki``.
    """
    q = Quantity.parse(page_size)
    if q.is_integer():
        q = Quantity(q.value(), BINARY_SI)
    return PREFIX + str(q)


def resource_name_for_kb(size_kb: int) -> str:
    """The resource name of a kernel pool ``hugepages-<size_kb>kB`` (2048 -> ``hugepages-2Mi``)."""
    return hugepage_resource_name(int(size_kb) * 1024)


def page_size_from_resource_name(name: str) -> Quantity:
    """The page size a hugepage resource name carries; ``InputError`` when it is not one."""
    if not is_hugepage_resource_name(name):
        raise InputError(f"resource name: {name} is an invalid hugepage name")
    try:
        return Quantity.parse(name[len(PREFIX):])
    except InputError as err:
        raise InputError(f"resource name: {name}: {err}") from None


def is_value_divisible(name: str, quantity: QuantityLike) -> bool:
    """Whether ``quantity`` is a whole (non-negative) multiple of the page size of ``name``."""
    try:
        size = page_size_from_resource_name(name)
        q = Quantity.parse(quantity)
    except InputError:
        return False
    if size <= 0 or not size.is_integer():
        return False
    return q.value() % size.value() == 0


def is_native_resource(name: str) -> bool:
    """Unprefixed names and ``*kubernetes.io/`` names are native (``IsNativeResource``)."""
    return "/" not in name or "kubernetes.io/" in name


def is_overcommit_allowed(name: str) -> bool:
    """Whether requests may be below limits: native resources except hugepages."""
    return is_native_resource(name) and not is_hugepage_resource_name(name)


@dataclass(frozen=True)
class FieldError:
    """One validation failure: ``field`` is relative to the container's ``resources``.

    ``field`` is the path the API server reports (it says ``requests``, not
    ``requests[hugepages-2Mi]``, when a request differs from its limit);
    ``resource`` names the entry it is about, and :attr:`path` is the full
    path of that entry, which messages show.
    """

    type: str  # "Invalid", "Required" or "Forbidden"
    field: str
    detail: str
    value: Optional[str] = None
    resource: Optional[str] = None

    @property
    def path(self) -> str:
        """``resources.requests[hugepages-2Mi]``: the field down to the resource entry when it names one."""
        where = f"resources.{self.field}" if self.field else "resources"
        if self.resource is not None and not where.endswith("]"):
            where += f"[{self.resource}]"
        return where

    def __str__(self) -> str:
        # the API server's wording: field.ErrorType strings, the value quoted as Go's %q does
        kind = {"Invalid": "Invalid value", "Required": "Required value"}.get(self.type, self.type)
        import json  # here: only an error message pays for it

        shown = f": {json.dumps(self.value)}" if self.value is not None else ""
        return f"{self.path}: {kind}{shown}: {self.detail}"


_STANDARD_CONTAINER = ("cpu", "memory", "ephemeral-storage")


def _name_errors(name: str, q: Quantity, where: str) -> List[FieldError]:
    # validateContainerResourceName + ValidateResourceQuantityValue
    errors: List[FieldError] = []
    if "/" not in name:
        if name not in _STANDARD_CONTAINER and not is_hugepage_resource_name(name):
            errors.append(FieldError("Invalid", where, "must be a standard resource for containers", name))
    elif not is_native_resource(name) and name.startswith("requests."):
        errors.append(FieldError("Invalid", where, "doesn't follow extended resource name standard", name))
    if q < 0:
        errors.append(FieldError("Invalid", where, "must be greater than or equal to 0", str(q)))
    if "/" in name and not is_native_resource(name) and not q.is_integer():
        errors.append(FieldError("Invalid", where, "must be an integer", str(q)))
    return errors


def _hugepage_value_errors(name: str, q: Quantity, where: str) -> List[FieldError]:
    """The error of a hugepage quantity that is not a whole number of pages (none for other resources)."""
    if not is_hugepage_resource_name(name) or is_value_divisible(name, q):
        return []
    return [FieldError("Invalid", where, f"{q} is not positive integer multiple of {name}", str(q))]


def validate_container_resources(requests: Mapping[str, QuantityLike],
                                 limits: Mapping[str, QuantityLike]) -> List[FieldError]:
    """The hugepage-related checks of ``ValidateResourceRequirements`` for one container.

    Returns every error (an empty list means valid).  Limits alone are
    fine: API defaulting copies them into requests.
    """
    reqs = {n: Quantity.parse(v) for n, v in (requests or {}).items()}
    lims = {n: Quantity.parse(v) for n, v in (limits or {}).items()}
    errors: List[FieldError] = []
    for name in sorted(lims):
        q = lims[name]
        errors.extend(_name_errors(name, q, f"limits[{name}]"))
        errors.extend(_hugepage_value_errors(name, q, f"limits[{name}]"))
    for name in sorted(reqs):
        q = reqs[name]
        errors.extend(_name_errors(name, q, f"requests[{name}]"))
        limit = lims.get(name)
        if limit is not None:
            if q != limit and not is_overcommit_allowed(name):
                errors.append(FieldError("Invalid", "requests", f"must be equal to {name} limit of {limit}", str(q),
                                         name))
            elif q > limit:
                errors.append(FieldError("Invalid", "requests",
                                         f"must be less than or equal to {name} limit of {limit}", str(q), name))
        elif not is_overcommit_allowed(name):
            errors.append(FieldError("Required", "limits", "Limit must be set for non overcommitable resources",
                                     None, name))
        errors.extend(_hugepage_value_errors(name, q, f"requests[{name}]"))
    names = set(reqs) | set(lims)
    if any(is_hugepage_resource_name(n) for n in names) and not any(n in _QOS_COMPUTE for n in names):
        errors.append(FieldError("Forbidden", "", "HugePages require cpu or memory"))
    return errors


def capacity_from_machine_info(num_cores: int, memory_bytes: int,
                               hugepages: Iterable[Tuple[int, int]]) -> Dict[str, Quantity]:
    """Node capacity the kubelet reports: ``cpu``, ``memory`` and ``hugepages-<size>`` for every pool.

    ``hugepages`` yields ``(page_size_kb, num_pages)``; every size appears,
    even with 0 pages.
    """
    cap: Dict[str, Quantity] = {
        "cpu": Quantity(int(num_cores)),
        "memory": Quantity(int(memory_bytes), BINARY_SI),
    }
    for size_kb, pages in hugepages:
        name = resource_name_for_kb(size_kb)
        cap[name] = Quantity(int(size_kb) * 1024 * int(pages), BINARY_SI)
    return cap
