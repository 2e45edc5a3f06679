"""What the ledger reads back from its database, checked once per read: the config document and every column.

SQLite keeps whatever a program puts in a column (a BLOB in a TEXT
column, text in a REAL one) and the ``config`` meta value is JSON, so a
database edited by hand or by another program can hold values of any type.
Everything :mod:`.sql` reads passes through here once per read, so the rest
of pynuma can trust the types and bounds; a value pynuma never writes
raises :class:`Damaged` naming the key or column::

    config.allocatable.cpu: 'abc' is not a quantity
    pods.deadline: 'x' is not a number (pod 'web-1')

Allocatable amounts are the scheduler's integers (cpu in millicores, bytes,
units; ``pods`` a count), bounded as a Kubernetes quantity is (2^63-1, so
at most 1000 times that in millicores); a quantity string (``"8"``,
``"30Gi"``) means what it means to :meth:`Ledger.configure`.
"""
from __future__ import annotations

import json
from math import isfinite
from typing import Any, Dict, Optional, Tuple

from ..cpuset import CPUSet
from ..errors import InputError
from ..limits import MAX_CPUS, MAX_HUGEPAGE_KB, MAX_NUMA_NODES
from ..parse import shown as _shown_text
from ..quantity import MAX_MAGNITUDE, Quantity
from .model import ASSUMED, BOUND, NodeConfig

#: Longest ``config`` document read (a device inventory of thousands of devices is well below it).
MAX_CONFIG_CHARS = 16 << 20
#: Longest JSON column read (``pods.requests``, ``memory.numa``).
MAX_COLUMN_CHARS = 1 << 20
#: A pod's requests are sums of quantities of at most 2^63-1 each (cpu x1000): far below this.
MAX_REQUEST_UNITS = 1 << 96


class Damaged(ValueError):
    """A stored value pynuma never writes; the message names where it is (``config.devices[0].id: ...``)."""


def shown(value: Any) -> str:
    """The value, short and on one line (a huge integer by its size)."""
    if type(value) is int and value.bit_length() > 128:
        return f"<integer of {value.bit_length()} bits>"
    return _shown_text(value)


def _key(name: Any) -> str:
    """A key as part of a path: as it is when plain, else quoted."""
    if isinstance(name, str) and 0 < len(name) <= 64 and name.isprintable() and " " not in name:
        return name
    return shown(name)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _finite(text: str) -> float:
    value = float(text)
    if not isfinite(value):
        raise ValueError(f"number {text[:40]} out of range")
    return value


def _not_a_number(name: str):
    raise ValueError(f"{name} is not a number")


_DECODE = json.JSONDecoder(parse_float=_finite, parse_constant=_not_a_number).decode  # made once: reads are hot


def _json(text: Any, where: str, limit: int):
    """A JSON document as pynuma writes it (text, finite numbers only)."""
    if type(text) is not str:
        raise Damaged(f"{where}: {shown(text)} is not JSON text")
    if len(text) > limit:
        raise Damaged(f"{where}: {len(text)} characters, more than the {limit} pynuma ever writes")
    try:
        return _DECODE(text)
    except RecursionError:
        raise Damaged(f"{where}: JSON nested too deep") from None
    except ValueError as err:
        raise Damaged(f"{where}: not JSON ({str(err)[:80]})") from None


def _int(value: Any, where: str, low: int, high: int, what: str) -> int:
    if type(value) is not int:
        raise Damaged(f"{where}: {shown(value)} is not {what}")
    if not low <= value <= high:
        raise Damaged(f"{where}: {shown(value)} is not {what} (between {low} and {high})")
    return value


def _str(value: Any, where: str, what: str = "a string") -> str:
    if type(value) is not str:
        raise Damaged(f"{where}: {shown(value)} is not {what}")
    return value


# -- the config document ----------------------------------------------------------------------------


def _allocatable(raw: Any, where: str) -> Optional[Dict[str, int]]:
    if raw is None:
        return None
    if type(raw) is not dict:
        raise Damaged(f"{where}: expected an object of resource amounts, got {_kind(raw)}")
    out: Dict[str, int] = {}
    for name, value in raw.items():
        w = f"{where}.{_key(name)}"
        if not name:
            raise Damaged(f"{w}: an empty resource name")
        if type(value) is int:
            n = value
        elif type(value) is str:
            from .node import allocatable_units

            try:
                units = allocatable_units({name: Quantity.parse(value)})
            except InputError:
                raise Damaged(f"{w}: {shown(value)} is not a quantity") from None
            if name not in units:
                continue  # a resource the scheduler does not account, as configure() drops it
            n = units[name]
        elif type(value) is float:
            raise Damaged(f"{w}: {shown(value)} is not a whole number of units")
        else:
            raise Damaged(f"{w}: {shown(value)} is not a quantity")
        if n < 0:
            raise Damaged(f"{w}: {shown(value)} is negative")
        if n > (MAX_MAGNITUDE * 1000 if name == "cpu" else MAX_MAGNITUDE):
            raise Damaged(f"{w}: {shown(value)} is more than a quantity holds (2^63-1"
                          f"{' cores' if name == 'cpu' else ''})")
        out[name] = n
    return out


def _node_id(value: Any) -> bool:
    return type(value) is int and 0 <= value < MAX_NUMA_NODES


def _memory(raw: Any, where: str) -> Optional[Dict[str, Any]]:
    """The Memory Manager's machine and reservations, as :func:`.managers.memory_config` writes them (kept as is)."""
    if raw is None or raw == {}:
        return raw
    if type(raw) is not dict:
        raise Damaged(f"{where}: expected an object with machine and reserved, got {_kind(raw)}")
    machine, reserved = raw.get("machine"), raw.get("reserved")
    if type(machine) is not list:
        raise Damaged(f"{where}.machine: expected a list of [node, bytes, [[page_kb, pages], ...]], "
                      f"got {_kind(machine)}")
    seen = set()
    for i, node in enumerate(machine):
        w = f"{where}.machine[{i}]"
        if type(node) is not list or len(node) != 3:
            raise Damaged(f"{w}: expected [node, bytes, [[page_kb, pages], ...]], got {shown(node)}")
        nid, size, pools = node
        _int(nid, f"{w}[0]", 0, MAX_NUMA_NODES - 1, "a NUMA node id")
        if nid in seen:
            raise Damaged(f"{w}[0]: NUMA node {nid} twice")
        seen.add(nid)
        _int(size, f"{w}[1]", 0, MAX_MAGNITUDE, "a size in bytes")
        if type(pools) is not list:
            raise Damaged(f"{w}[2]: expected a list of [page_kb, pages], got {_kind(pools)}")
        for j, pool in enumerate(pools):
            if type(pool) is not list or len(pool) != 2:
                raise Damaged(f"{w}[2][{j}]: expected [page_kb, pages], got {shown(pool)}")
            _int(pool[0], f"{w}[2][{j}][0]", 1, MAX_HUGEPAGE_KB, "a page size in kB")
            _int(pool[1], f"{w}[2][{j}][1]", 0, MAX_MAGNITUDE, "a page count")
    if type(reserved) is not dict:
        raise Damaged(f"{where}.reserved: expected an object of node -> resource -> bytes, got {_kind(reserved)}")
    total = 0
    for node, amounts in reserved.items():
        w = f"{where}.reserved.{_key(node)}"
        if not (node.isascii() and node.isdigit() and len(node) <= 4 and int(node) < MAX_NUMA_NODES):
            raise Damaged(f"{w}: {shown(node)} is not a NUMA node id")
        if type(amounts) is not dict:
            raise Damaged(f"{w}: expected an object of resource -> bytes, got {_kind(amounts)}")
        for res, size in amounts.items():
            _int(size, f"{w}.{_key(res)}", 0, MAX_MAGNITUDE, "a size in bytes")
            if res == "memory":
                total += size
    if total <= 0:
        raise Damaged(f"{where}.reserved: no memory reserved, which the static Memory Manager needs")
    return raw


def _devices(raw: Any, where: str) -> Tuple[Dict[str, Any], ...]:
    """The device inventory ``[{resource, id, numa, healthy}]`` (kept as is)."""
    if raw is None:
        return ()
    if type(raw) is not list:
        raise Damaged(f"{where}: expected a list of {{resource, id, numa, healthy}}, got {_kind(raw)}")
    seen = set()
    for i, dev in enumerate(raw):
        w = f"{where}[{i}]"
        if type(dev) is not dict:
            raise Damaged(f"{w}: expected an object {{resource, id, numa, healthy}}, got {_kind(dev)}")
        res, did = dev.get("resource"), dev.get("id")
        if type(res) is not str or not res:
            raise Damaged(f"{w}.resource: {shown(res)} is not a resource name")
        if type(did) is not str and type(did) is not int:
            raise Damaged(f"{w}.id: {shown(did)} is not a device id")
        if (res, str(did)) in seen:
            raise Damaged(f"{w}.id: device {shown(did)} of {res} twice")
        seen.add((res, str(did)))
        numa = dev.get("numa")
        if not (numa is None or numa == -1 and type(numa) is int or _node_id(numa)
                or type(numa) is list and all(_node_id(n) for n in numa)):
            raise Damaged(f"{w}.numa: {shown(numa)} is not a NUMA node id, a list of them or null")
        if type(dev.get("healthy", True)) is not bool:
            raise Damaged(f"{w}.healthy: {shown(dev.get('healthy'))} is not true or false")
    return tuple(raw)


def _taints(raw: Any, where: str) -> Tuple[Dict[str, Any], ...]:
    if raw is None:
        return ()
    if type(raw) is not list:
        raise Damaged(f"{where}: expected a list of {{key, value, effect}}, got {_kind(raw)}")
    for i, taint in enumerate(raw):
        if type(taint) is not dict:
            raise Damaged(f"{where}[{i}]: expected an object {{key, value, effect}}, got {_kind(taint)}")
        for name in ("key", "value", "effect"):
            value = taint.get(name)
            if value is not None and type(value) is not str:
                raise Damaged(f"{where}[{i}].{name}: {shown(value)} is not a string")
    return tuple(raw)


def _labels(raw: Any, where: str) -> Dict[str, str]:
    if raw is None:
        return {}
    if type(raw) is not dict:
        raise Damaged(f"{where}: expected an object of label -> value, got {_kind(raw)}")
    for name, value in raw.items():
        _str(value, f"{where}.{_key(name)}")
    return raw


def _names(raw: Any, where: str) -> Tuple[str, ...]:
    if raw is None:
        return ()
    if type(raw) is not list:
        raise Damaged(f"{where}: expected a list of resource names, got {_kind(raw)}")
    for i, name in enumerate(raw):
        _str(name, f"{where}[{i}]", "a resource name")
    return tuple(raw)


def node_config(raw: Any, where: str = "config") -> NodeConfig:
    """A :class:`NodeConfig` from its JSON document (``NodeConfig.to_json``), every value checked.

    Keys it does not know are ignored; missing ones take their defaults.
    """
    if type(raw) is not dict:
        raise Damaged(f"{where}: expected a JSON object, got {_kind(raw)}")
    policy = raw.get("cpu_policy")
    if policy is not None and (type(policy) is not str or not policy):
        raise Damaged(f"{where}.cpu_policy: {shown(policy)} is not a CPU Manager policy name")
    cpus = raw.get("cpus")
    if cpus is not None:
        if type(cpus) is not str:
            raise Damaged(f"{where}.cpus: {shown(cpus)} is not a CPU list")
        try:
            cpus = CPUSet.parse(cpus)
        except ValueError as err:
            raise Damaged(f"{where}.cpus: {shown(cpus)} is not a CPU list ({err})") from None
    name = raw.get("node_name")
    name = "" if name is None else _str(name, f"{where}.node_name")
    partial = raw.get("partial")
    if partial is not None and type(partial) is not bool:
        raise Damaged(f"{where}.partial: {shown(partial)} is not true or false")
    return NodeConfig(_allocatable(raw.get("allocatable"), f"{where}.allocatable"), policy, cpus,
                      _memory(raw.get("memory"), f"{where}.memory"), _devices(raw.get("devices"), f"{where}.devices"),
                      name, _labels(raw.get("labels"), f"{where}.labels"), _taints(raw.get("taints"), f"{where}.taints"),
                      bool(partial), _names(raw.get("unknown"), f"{where}.unknown"))


def config_text(text: Any) -> NodeConfig:
    """The ``config`` meta value, checked."""
    return node_config(_json(text, "config", MAX_CONFIG_CHARS))


# -- the tables -------------------------------------------------------------------------------------


def _who(uid: Any) -> str:
    return f" (pod {shown(uid)})" if type(uid) is str else ""


def cpu_row(cpu: Any, uid: Any, container: Any) -> None:
    """A row of ``cpus``: the CPU id, the pod and container holding it."""
    if type(cpu) is int and 0 <= cpu < MAX_CPUS and type(uid) is str and type(container) is str:
        return
    _str(uid, "cpus.pod_uid", "a pod UID")
    if type(cpu) is not int or not 0 <= cpu < MAX_CPUS:
        raise Damaged(f"cpus.cpu: {shown(cpu)} is not a CPU id (below {MAX_CPUS}){_who(uid)}")
    _str(container, f"cpus.container{_who(uid)}", "a container name")


def memory_row(uid: Any, container: Any, typ: Any, size: Any, numa: Any) -> Tuple[int, ...]:
    """A row of ``memory`` (one block); its NUMA affinity."""
    if (type(uid) is str and type(container) is str and type(typ) is str and type(size) is int
            and 0 <= size <= MAX_MAGNITUDE and type(numa) is str and len(numa) <= MAX_COLUMN_CHARS):
        try:
            nodes = _DECODE(numa)
        except (ValueError, RecursionError):
            nodes = None
        if type(nodes) is list and len(nodes) <= MAX_NUMA_NODES and all(_node_id(n) for n in nodes):
            return tuple(nodes)
    _str(uid, "memory.pod_uid", "a pod UID")
    who = _who(uid)
    _str(container, f"memory.container{who}", "a container name")
    _str(typ, f"memory.type{who}", "a memory resource name")
    _int(size, f"memory.size{who}", 0, MAX_MAGNITUDE, "a size in bytes")
    nodes = _json(numa, f"memory.numa{who}", MAX_COLUMN_CHARS)
    if type(nodes) is not list or len(nodes) > MAX_NUMA_NODES or not all(_node_id(n) for n in nodes):
        raise Damaged(f"memory.numa{who}: {shown(numa)} is not a list of NUMA node ids")
    return tuple(nodes)


def device_row(resource: Any, device: Any, uid: Any, container: Any) -> None:
    """A row of ``devices``: a device id of a resource, the pod and container holding it."""
    if type(resource) is str and type(device) is str and type(uid) is str and type(container) is str:
        return
    _str(uid, "devices.pod_uid", "a pod UID")
    who = _who(uid)
    _str(resource, f"devices.resource{who}", "a resource name")
    _str(device, f"devices.device_id{who}", "a device id")
    _str(container, f"devices.container{who}", "a container name")


def _time(value: Any, where: str, optional: bool) -> Optional[float]:
    if value is None and optional:
        return None
    if (type(value) is not float and type(value) is not int) or not isfinite(value):
        raise Damaged(f"{where}: {shown(value)} is not a number of seconds")
    return value


def pod_row(uid: Any, name: Any, namespace: Any, state: Any, requests: Any, assumed_at: Any, deadline: Any,
            bound_at: Any, generation: Any) -> Dict[str, int]:
    """A row of ``pods`` (everything but its placement); its requests."""
    # the common case in one expression (a time is finite when t - t is 0: not for inf or nan); the checks
    # below say what is wrong otherwise
    if (type(uid) is str and uid and type(name) is str and type(namespace) is str
            and (state == ASSUMED or state == BOUND) and type(generation) is int and generation >= 0
            and (type(assumed_at) is float and assumed_at - assumed_at == 0.0 or type(assumed_at) is int)
            and (deadline is None or type(deadline) is float and deadline - deadline == 0.0 or type(deadline) is int)
            and (bound_at is None or type(bound_at) is float and bound_at - bound_at == 0.0 or type(bound_at) is int)
            and type(requests) is str and len(requests) <= MAX_COLUMN_CHARS):
        try:
            req = _DECODE(requests)
        except (ValueError, RecursionError):
            req = None
        if type(req) is dict:
            for n in req.values():
                if type(n) is not int or not -MAX_REQUEST_UNITS < n < MAX_REQUEST_UNITS:
                    break
            else:
                return req
    if type(uid) is not str or not uid:
        raise Damaged(f"pods.uid: {shown(uid)} is not a pod UID")
    who = _who(uid)
    _str(name, f"pods.name{who}", "a pod name")
    _str(namespace, f"pods.namespace{who}", "a namespace")
    if state != ASSUMED and state != BOUND:
        raise Damaged(f"pods.state{who}: {shown(state)} is not {ASSUMED} or {BOUND}")
    _time(assumed_at, f"pods.assumed_at{who}", False)
    _time(deadline, f"pods.deadline{who}", True)
    _time(bound_at, f"pods.bound_at{who}", True)
    if type(generation) is not int or generation < 0:
        raise Damaged(f"pods.generation{who}: {shown(generation)} is not a generation")
    req = _json(requests, f"pods.requests{who}", MAX_COLUMN_CHARS)
    if type(req) is not dict:
        raise Damaged(f"pods.requests{who}: expected an object of resource amounts, got {_kind(req)}")
    for res, n in req.items():
        if type(n) is not int or not -MAX_REQUEST_UNITS < n < MAX_REQUEST_UNITS:
            raise Damaged(f"pods.requests.{_key(res)}{who}: {shown(n)} is not a whole number of units")
    return req
