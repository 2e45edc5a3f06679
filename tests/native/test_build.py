"""setup.py: Cython only when building, and a build never compiles what another build of the tree already did.

Runs ``setup.py`` on a copy of the tree restricted to the smallest native
module (``PYNUMA_NATIVE_ONLY=minplus``), so the whole file costs seconds.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
MODULE = "_native_minplus"

pytest.importorskip("Cython")
if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
    pytest.skip("no C compiler", allow_module_level=True)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the sources without anything generated or built (one per module: builds cost seconds)."""
    dest = tmp_path_factory.mktemp("build") / "src"
    dest.mkdir()
    skip = shutil.ignore_patterns("*.so", "*.c", "__pycache__", "build", "*.egg-info")
    for name in ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy(PROJECT / name, dest / name)
    shutil.copytree(PROJECT / "pynuma", dest / "pynuma", ignore=skip)
    shutil.copytree(PROJECT / "native", dest / "native", ignore=shutil.ignore_patterns("*.o"))
    return dest


def setup_py(tree, *args, **env):
    full = {**os.environ, "PYNUMA_NATIVE_ONLY": "minplus", "PYNUMA_REQUIRE_NATIVE": "1", **env}
    for key in ("CFLAGS", "CC", "LDFLAGS", "CPPFLAGS"):
        if key not in env:
            full.pop(key, None)
    res = subprocess.run([sys.executable, "setup.py", *args], cwd=tree, env=full, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    return res


def _built(root: Path):
    return sorted(root.glob(f"**/pynuma/{MODULE}*.so"))


# the tests run in file order on one tree: metadata first, then one build the others reuse
def test_metadata_requests_run_no_cython(tree):
    setup_py(tree, "-q", "egg_info")
    assert not (tree / "pynuma" / f"{MODULE}.c").exists()


def test_second_build_copies_what_the_first_compiled(tree, tmp_path):
    setup_py(tree, "-q", "build_ext", "-j", "1")
    c_file = tree / "pynuma" / f"{MODULE}.c"
    (first,) = _built(tree / "build")
    generated = c_file.stat().st_mtime_ns
    # another build directory, as an editable install uses: copied from build/lib, no compiler, no Cython
    other = tmp_path / "other"
    res = setup_py(tree, "build_ext", "--build-lib", str(other), "--build-temp", str(tmp_path / "tmp"))
    assert "copied, not compiled again" in res.stderr
    assert not (tmp_path / "tmp").exists()  # nothing was compiled
    (copy,) = _built(other)
    assert copy.read_bytes() == first.read_bytes()
    assert c_file.stat().st_mtime_ns == generated


def test_other_compiler_settings_compile_again(tree, tmp_path):
    other = tmp_path / "other"
    res = setup_py(tree, "build_ext", "--build-lib", str(other), "--build-temp", str(tmp_path / "tmp"),
                   CFLAGS="-O1")
    assert "copied" not in res.stderr and _built(other)


def test_changed_pyx_goes_through_cython_again(tree):
    c_file = tree / "pynuma" / f"{MODULE}.c"
    before = c_file.stat().st_mtime_ns
    pyx = tree / "pynuma" / f"{MODULE}.pyx"
    os.utime(pyx, ns=(before + 10**9, before + 10**9))
    setup_py(tree, "-q", "build_ext", "-j", "1")
    assert c_file.stat().st_mtime_ns > before
    (so,) = _built(tree / "build")
    assert so.stat().st_mtime_ns > before  # and compiled again from it
