"""Fuzz oracles: every parser that reads outside data, native against pure where both exist.

Each ``check_<name>(data: bytes)`` feeds one input to a parser and raises
``AssertionError`` on a finding: an exception other than the parser's
documented bad-input error, native and pure disagreeing (in answer or in
error text), or a round trip that does not return what it started from.
The documented errors are ``ValueError`` (``InputError``, ``ParseError`` and
``CheckpointError`` are pynuma errors; ``InputError`` is a ``ValueError``).
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Callable, Dict

from pynuma import _impl
from pynuma.errors import PynumaError

_DOCUMENTED = (ValueError, PynumaError)


def _outcome(fn: Callable, *args):
    """``("ok", value)`` or ``("error", type name, message)``; undocumented exceptions propagate."""
    try:
        return ("ok", fn(*args))
    except _DOCUMENTED as err:
        return ("error", type(err).__name__, str(err))


def _twins(area: str, name: str, *args):
    """The outcomes of ``name(*args)`` on every implementation of ``area``, which must agree."""
    mods = _impl.implementations(area)
    outcomes = {kind: _outcome(getattr(mod, name), *args) for kind, mod in mods.items()}
    if len(outcomes) == 2:
        assert outcomes["native"] == outcomes["pure"], f"{area}.{name}{args!r:.200}: {outcomes!r:.600}"
    return outcomes["pure"]


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def check_cpulist(data: bytes) -> None:
    out = _twins("bitmap", "parse_cpulist", data.decode("latin-1"))
    if out[0] == "ok":
        text = _twins("bitmap", "format_cpulist", out[1])[1]
        assert _twins("bitmap", "parse_cpulist", text) == out, (data, text)


def check_cpumask(data: bytes) -> None:
    out = _twins("bitmap", "parse_cpumask", data.decode("latin-1"))
    if out[0] == "ok":
        text = _twins("bitmap", "format_cpumask", out[1])[1]
        assert _twins("bitmap", "parse_cpumask", text) == out, (data, text)


def acpi_table(signature: bytes, body: bytes) -> bytes:
    """``body`` behind a valid 36-byte ACPI header (length and checksum right), so inputs reach the entries."""
    header = bytearray(signature + (36 + len(body)).to_bytes(4, "little") + b"\x01\x00PYNUMAFUZZTBL "
                       + b"\x01\x00\x00\x00PNMA\x01\x00\x00\x00")
    header[9] = -(sum(header) + sum(body)) & 0xFF
    return bytes(header) + body


def check_slit(data: bytes) -> None:
    for blob in (data, acpi_table(b"SLIT", data)):  # as found, and behind a header that verifies
        out = _twins("acpi", "parse_slit", blob)
        if out[0] == "ok":
            _twins("acpi", "slit_is_valid", out[1])


def check_srat(data: bytes) -> None:
    for blob in (data, acpi_table(b"SRAT", data)):
        _twins("acpi", "parse_srat", blob)


def check_meminfo(data: bytes) -> None:
    from pynuma.parse import parse_meminfo, parse_memory_totals
    from pynuma.pressure.host import parse_meminfo as host_meminfo

    text = _text(data)
    for fn in (parse_meminfo, parse_memory_totals, host_meminfo):
        _outcome(fn, text)


def check_distance_row(data: bytes) -> None:
    from pynuma.parse import parse_distance_row

    out = _outcome(parse_distance_row, _text(data))
    if out[0] == "ok":
        assert all(isinstance(v, int) and v >= 0 for v in out[1]), out


def check_quantity(data: bytes) -> None:
    from pynuma.quantity import Quantity, parse_quantity

    out = _outcome(parse_quantity, _text(data))
    if out[0] == "ok":
        q = out[1]
        again = parse_quantity(str(q))  # what it prints, it reads back as the same amount
        assert again.amount == q.amount or again.value() == q.value(), (data, str(q), str(again))
        assert isinstance(Quantity.parse(str(q)), Quantity)


def check_eviction_flags(data: bytes) -> None:
    from pynuma.policy.eviction.syntax import parse_duration, parse_flags
    from pynuma.policy.eviction.thresholds import parse_threshold_config

    text = _text(data)
    _outcome(parse_duration, text)
    flags = _outcome(parse_flags, text, "<")
    if flags[0] == "ok":
        _outcome(parse_threshold_config, [], flags[1], flags[1], None, None)
        _outcome(parse_threshold_config, [], None, flags[1], parse_flags(text.replace("<", "="), "=") or {}, None)


def check_checkpoint(data: bytes) -> None:
    from pynuma.state import cpu_checkpoint, memory_checkpoint

    text = _text(data)
    _outcome(cpu_checkpoint.decode, text)
    _outcome(cpu_checkpoint.load, text)
    _outcome(memory_checkpoint.parse_checkpoint, text)


def check_pod_yaml(data: bytes) -> None:
    import yaml

    from pynuma._yamlsubset import load_all
    from pynuma.pod import load_pods

    text = _text(data)
    fast = load_all(text)
    if fast is not None:  # the subset answers only where PyYAML would answer the same
        try:
            slow = list(yaml.safe_load_all(text))
        except (yaml.YAMLError, ValueError, RecursionError) as err:
            raise AssertionError(f"subset read {text!r:.200} that PyYAML refuses: {err}") from None
        assert fast == slow, (text, fast, slow)
    with tempfile.NamedTemporaryFile("wb", suffix=".yaml", delete=False) as f:
        f.write(data)
    try:
        _outcome(load_pods, f.name)
    finally:
        os.unlink(f.name)


def check_json_writer(data: bytes) -> None:
    from pynuma.cli._common import json_text

    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return
    try:
        want = json.dumps(obj, indent=2)
    except (ValueError, RecursionError):
        return
    assert json_text(obj) == want, (data[:200],)


class _Tree:
    """A small fake root, reused across inputs: one file in it is replaced by the input."""

    def __init__(self, build: Callable[[str], None]) -> None:
        self.dir = tempfile.mkdtemp(prefix="pynuma-fuzz-")
        build(self.dir)

    def put(self, rel: str, data: bytes) -> None:
        with open(os.path.join(self.dir, rel), "wb") as f:
            f.write(data)


_trees: Dict[str, _Tree] = {}


def _cgroup_tree(root: str) -> None:
    from pynuma.cgroups.detect import SYSTEMD, V2
    from pynuma.cgroups.synthetic import build_tree, make_pods

    build_tree(root, mode=V2, driver=SYSTEMD, pods=make_pods(1, containers_per_pod=1))


def check_memory_stat(data: bytes) -> None:
    """A cgroup's memory.stat and memory.current: the native walk and the pure one read the same records."""
    from pynuma.cgroups import v2
    from pynuma.fsroot import FsRoot

    tree = _trees.get("cgroup") or _trees.setdefault("cgroup", _Tree(_cgroup_tree))
    pod = next(p for p in os.listdir(os.path.join(tree.dir, "sys/fs/cgroup/kubepods.slice")) if "pod" in p)
    tree.put(f"sys/fs/cgroup/kubepods.slice/{pod}/memory.stat", data)
    tree.put(f"sys/fs/cgroup/kubepods.slice/{pod}/memory.current", data[:24])
    specs = [tuple(s) for s in v2.file_specs(["2MB"])]
    with FsRoot(tree.dir) as fs:
        _twins("cgwalk", "walk", fs.root_fd, ["sys/fs/cgroup/kubepods.slice"], True, specs, True)


def _proc_tree(root: str) -> None:
    os.makedirs(os.path.join(root, "proc/1/task/1"))
    for rel, text in (("proc/1/stat", "1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1000 1\n"),
                      ("proc/1/status", "Name:\tinit\nPid:\t1\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t0\n"),
                      ("proc/1/numa_maps", ""), ("proc/1/cmdline", "init\0")):
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)


def check_numa_maps(data: bytes) -> None:
    """A process's numa_maps (and, from the same bytes, its status): native and pure read the same."""
    from pynuma.fsroot import FsRoot

    tree = _trees.get("proc") or _trees.setdefault("proc", _Tree(_proc_tree))
    tree.put("proc/1/numa_maps", data)
    tree.put("proc/1/status", b"Name:\tinit\n" + data[:200])
    flags = 0xFF  # every part the reader knows
    with FsRoot(tree.dir) as fs:
        _twins("procs", "read_processes", fs.root_fd, [1], flags)


TARGETS: Dict[str, Callable[[bytes], None]] = {
    name[len("check_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("check_")
}
