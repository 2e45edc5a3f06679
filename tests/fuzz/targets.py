"""The fuzz targets by name: ``tests/fuzz/fuzz_<name>.py``, each with ``check(data: bytes)``."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable, Dict

NAMES = sorted(p.stem[len("fuzz_"):] for p in Path(__file__).parent.glob("fuzz_*.py"))

TARGETS: Dict[str, Callable[[bytes], None]] = {
    name: importlib.import_module(f"tests.fuzz.fuzz_{name}").check for name in NAMES
}
