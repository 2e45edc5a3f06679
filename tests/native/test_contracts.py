"""Native modules keep the contract of their pure twins: same public functions,
no fd or memory leaks on error paths, the GIL released in batch reads."""
from __future__ import annotations

import errno
import inspect
import os
import threading

import pytest

from pynuma import _impl

AREAS = ("fsread", "bitmap", "acpi")


def _public(mod):
    return {n for n, v in vars(mod).items() if callable(v) and not n.startswith("_")
            and getattr(v, "__module__", mod.__name__) == mod.__name__}


def _native(area):
    found = _impl.implementations(area)
    if "native" not in found:
        if os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1":
            pytest.fail(f"native {area} not built")
        pytest.skip(f"native {area} not built")
    return found["native"], found["pure"]


@pytest.mark.parametrize("area", AREAS)
def test_same_functions(area):
    native, pure = _native(area)
    assert _public(pure) <= _public(native) | set(dir(native))
    for name in _public(pure):
        assert callable(getattr(native, name)), name


@pytest.mark.parametrize("area", AREAS)
def test_selected_once(area):
    assert _impl.select(area) is _impl.select(area)


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_no_fd_leak_on_errors(tmp_path):
    native, _ = _native("fsread")
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    os.symlink("loop", tmp_path / "loop")
    root = native.open_root(str(tmp_path))
    try:
        before = _open_fds()
        for walk in (False, True):
            native._walk_only(walk)
            for _ in range(200):
                native.read_many(root, ["f", "missing", "d", "loop", "f/x", "d/../f"])
                for path in ("missing", "d", "loop", "f/x"):
                    with pytest.raises(OSError):
                        native.read_at(root, path)
                native.kind_at(root, "loop")
                native.list_at(root, "d")
        native._walk_only(False)
        assert _open_fds() == before
    finally:
        native.close_root(root)


def test_read_many_releases_the_gil(tmp_path):
    native, _ = _native("fsread")
    for i in range(50):
        (tmp_path / f"f{i}").write_text(str(i))
    root = native.open_root(str(tmp_path))
    results = []

    def work():
        results.append(native.read_many(root, [f"f{i}" for i in range(50)] * 40))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    native.close_root(root)
    assert len(results) == 4
    assert all(r == [str(i).encode() for i in range(50)] * 40 for r in results)


def test_signatures_documented():
    for area in AREAS:
        pure = _impl.implementations(area)["pure"]
        for name in _public(pure):
            assert inspect.getdoc(getattr(pure, name)) or name == "close_root", f"{area}.{name}"


def test_errno_is_negative_in_batches(tmp_path):
    native, pure = _native("fsread")
    for mod in (native, pure):
        root = mod.open_root(str(tmp_path))
        try:
            assert mod.read_many(root, ["nope"]) == [-errno.ENOENT]
        finally:
            mod.close_root(root)
