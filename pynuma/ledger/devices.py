"""PCI devices offered as extended resources, by a mapping the user gives (vendor / device / class -> name).

>>> rules = parse_rules(["10de=nvidia.com/gpu", "class:0200=example.com/nic"])
>>> [(r.vendor, r.class_prefix, r.resource) for r in rules]
[(4318, None, 'nvidia.com/gpu'), (None, '0200', 'example.com/nic')]

A rule matches a device by vendor id, by vendor and device id
(``10de:20b0``) or by class-code prefix (``class:03`` = every display
controller, ``class:0302`` = 3D controllers); the first matching rule names
the resource.  Each matched device becomes one unit of its resource, with
its NUMA node for the Device Manager's hints, in the ledger's inventory and
so in node capacity and allocatable.  The same rules can come from a JSON or
YAML file: ``[{"resource": ..., "vendor"?: "0x10de", "device"?: ..., "class"?: ...}]``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ..errors import InputError
from ..policy.podrequests import is_extended_resource


@dataclass(frozen=True)
class PciRule:
    """One line of the mapping: what it matches and the extended resource it offers."""

    resource: str
    vendor: Optional[int] = None
    device: Optional[int] = None
    class_prefix: Optional[str] = None  # lowercase hex digits, a prefix of the 6-digit class code

    def matches(self, dev: Any) -> bool:
        if self.vendor is not None and dev.vendor_id != self.vendor:
            return False
        if self.device is not None and dev.device_id != self.device:
            return False
        if self.class_prefix is not None:
            if dev.class_code is None or not f"{dev.class_code:06x}".startswith(self.class_prefix):
                return False
        return True


def _hex_id(text: Any, what: str, where: str) -> int:
    s = str(text).strip().lower()
    s = s[2:] if s.startswith("0x") else s
    if not s or len(s) > 4 or any(c not in "0123456789abcdef" for c in s):
        raise InputError(f"{where}: {what} {text!r} is not a 4-digit hex id")
    return int(s, 16)


def _class_prefix(text: Any, where: str) -> str:
    s = str(text).strip().lower()
    s = s[2:] if s.startswith("0x") else s
    if not s or len(s) > 6 or len(s) % 2 or any(c not in "0123456789abcdef" for c in s):
        raise InputError(f"{where}: class {text!r} must be 2, 4 or 6 hex digits (base class, subclass, interface)")
    return s


def _resource(name: Any, where: str) -> str:
    if not isinstance(name, str) or not is_extended_resource(name) or name.count("/") != 1 or name.endswith("/"):
        raise InputError(f"{where}: resource {name!r} must be an extended resource name like example.com/gpu")
    return name


def parse_rule(text: str) -> PciRule:
    """``VENDOR[:DEVICE]=RESOURCE`` or ``class:CLASS=RESOURCE`` (ids in hex)."""
    where = f"--pci-resource {text!r}"
    match, eq, name = text.rpartition("=")
    if not eq or not match:
        raise InputError(f"{where}: expected VENDOR[:DEVICE]=RESOURCE or class:CLASS=RESOURCE")
    resource = _resource(name.strip(), where)
    if match.lower().startswith("class:"):
        return PciRule(resource, class_prefix=_class_prefix(match[6:], where))
    vendor, colon, device = match.partition(":")
    return PciRule(resource, _hex_id(vendor, "vendor", where), _hex_id(device, "device", where) if colon else None)


def parse_rules(items: Iterable[str]) -> List[PciRule]:
    return [parse_rule(t) for t in items]


def rules_from_json(raw: Any, where: str) -> List[PciRule]:
    """Rules from a parsed mapping file (a list of ``{resource, vendor?, device?, class?}``)."""
    if not isinstance(raw, list):
        raise InputError(f"{where}: expected a list of {{resource, vendor, device, class}} rules")
    out = []
    for i, item in enumerate(raw):
        w = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"{w}: expected a map")
        unknown = set(item) - {"resource", "vendor", "device", "class"}
        if unknown:
            raise InputError(f"{w}: unknown keys {sorted(unknown)}")
        if "vendor" not in item and "class" not in item:
            raise InputError(f"{w}: a rule needs a vendor or a class")
        if "device" in item and "vendor" not in item:
            raise InputError(f"{w}: a device id needs its vendor")
        out.append(PciRule(_resource(item.get("resource"), w),
                           _hex_id(item["vendor"], "vendor", w) if "vendor" in item else None,
                           _hex_id(item["device"], "device", w) if "device" in item else None,
                           _class_prefix(item["class"], w) if "class" in item else None))
    return out


def offered_devices(pci_devices: Iterable[Any], rules: Sequence[PciRule]) -> List[Dict[str, Any]]:
    """The ledger inventory: one ``{resource, id, numa, healthy}`` per device a rule matches."""
    out = []
    for dev in sorted(pci_devices, key=lambda d: d.address):
        for rule in rules:
            if rule.matches(dev):
                out.append({"resource": rule.resource, "id": dev.address, "numa": dev.numa_node, "healthy": True})
                break
    return out


def capacity(inventory: Iterable[Dict[str, Any]]) -> Dict[str, int]:
    """Units per extended resource (healthy devices only)."""
    out: Dict[str, int] = {}
    for d in inventory:
        if d.get("healthy", True):
            out[d["resource"]] = out.get(d["resource"], 0) + 1
    return out
