"""Architecture rules that a grep can check.

* Only the root-relative reader touches ``/sys``, ``/proc`` and cgroupfs
  directly; everything else goes through ``FsRoot`` so ``--root`` works.
* ``ctypes`` is not used anywhere: syscalls go through the Cython layer.
"""
from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pynuma"
READERS = {"fsroot.py", "_pure_fsread.py", "_native_fsread.pyx"}

DIRECT_ACCESS = re.compile(
    r"""(\bopen|os\.(?:open|listdir|scandir|stat|lstat|walk|readlink)|Path|glob\.glob|io\.open)\(\s*[rbf]*["'](/sys|/proc)\b"""
)


def _sources():
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".pyx", ".pxd"))


def test_only_the_reader_opens_sys_and_proc():
    offenders = []
    for path in _sources():
        if path.name in READERS:
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            if DIRECT_ACCESS.search(line):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{lineno}: {line.strip()}")
    assert offenders == []


def test_no_ctypes():
    offenders = [str(p) for p in _sources() if re.search(r"^\s*(import|from)\s+ctypes\b", p.read_text(), re.M)]
    assert offenders == []


def test_direct_access_pattern_catches_a_real_offence():
    assert DIRECT_ACCESS.search('with open("/sys/devices/system/cpu/online") as f:')
    assert DIRECT_ACCESS.search("os.listdir('/proc')")
    assert not DIRECT_ACCESS.search('fs.read_text("/sys/devices/system/cpu/online")')


IO_MODULES = ("os", "io", "socket", "subprocess", "pynuma.fsroot", "pynuma.inputfile", "pynuma.discover",
              "pynuma.state")


def _imports(path: Path):
    """Absolute names of the modules ``path`` imports (relative imports resolved against its package)."""
    import ast

    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                yield ".".join(base + ([node.module] if node.module else []))
            else:
                yield node.module


def _is_io(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in IO_MODULES)


def test_policies_do_no_io():
    """pynuma/policy/ decides; reading machines and files, and writing state, live elsewhere."""
    offenders = [f"{path.relative_to(PACKAGE)}: {name}" for path in sorted((PACKAGE / "policy").rglob("*.py"))
                 for name in _imports(path) if _is_io(name)]
    assert not offenders, offenders
    assert _is_io("pynuma.state.memory_checkpoint") and not _is_io("pynuma.policy.memorymanager.state")
