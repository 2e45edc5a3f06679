"""``set_pool`` on synthetic roots: per-node pools, a stingy kernel, a read-only file, bad sizes."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from pynuma.errors import AccessDenied, AllocationError, InputError, PynumaError
from pynuma.fsroot import FsRoot
from pynuma.hugepages.allocate import pool_path, set_pool
from pynuma.hugepages.pools import read_hugepages
from tests.fsroot.test_hugepages_pools import TWO_NODES, build_tree


@pytest.fixture
def root(tmp_path):
    return build_tree(tmp_path, TWO_NODES, nodes=(0, 1))


def _nr(root, size, node=None):
    return int((root / pool_path(size, node).lstrip("/")).read_text())


def test_machine_wide_write_and_readback(root):
    res = set_pool(FsRoot(str(root)), 2048, 2048)
    assert (res.before, res.after, res.shortfall) == (1536, 2048, 0)
    assert _nr(root, 2048) == 2048
    assert read_hugepages(FsRoot(str(root))).pools[2048].total == 2048


def test_per_node_write_touches_only_that_node(root):
    res = set_pool(FsRoot(str(root)), 1048576, 3, node=1)
    assert res.path.endswith("node1/hugepages/hugepages-1048576kB/nr_hugepages")
    assert _nr(root, 1048576, 1) == 3 and _nr(root, 1048576, 0) == 2 and _nr(root, 1048576) == 4


def test_shorter_number_replaces_a_longer_one(root):
    # 1024 -> 700: the old digits must not survive in the plain file of a dump
    set_pool(FsRoot(str(root)), 2048, 700, node=0, force=True)
    assert _nr(root, 2048, 0) == 700


def _stingy_kernel(limit):
    """A write_text that plays the kernel: grants at most ``limit`` pages, as fragmented memory does."""
    real = FsRoot.write_text

    def write_text(fs, path, text):
        granted = min(int(text), limit)
        real(fs, path, f"{granted}\n")

    return write_text


def test_kernel_granting_fewer_pages_is_a_shortfall(root, monkeypatch):
    monkeypatch.setattr(FsRoot, "write_text", _stingy_kernel(1800))
    res = set_pool(FsRoot(str(root)), 2048, 4096)
    assert (res.after, res.shortfall) == (1800, 4096 - 1800)
    assert "short by 2296" in res.describe()


def test_never_below_in_use_without_force(root):
    fs = FsRoot(str(root))
    in_use = 1024 - 600  # node 0, 2 MiB pool
    with pytest.raises(AllocationError, match="424 pages are in use"):
        set_pool(fs, 2048, in_use - 1, node=0)
    assert _nr(root, 2048, 0) == 1024  # untouched
    assert set_pool(fs, 2048, in_use, node=0).after == in_use  # exactly the in-use count is fine
    assert set_pool(fs, 2048, 0, node=0, force=True).after == 0


def test_dry_run_writes_nothing(root):
    res = set_pool(FsRoot(str(root)), 2048, 10, dry_run=True, force=True)
    assert res.dry_run and res.after is None and res.shortfall == 0
    assert "would set hugepages-2Mi machine-wide: 1536 -> 10" in res.describe()
    assert _nr(root, 2048) == 1536


@pytest.mark.parametrize("size,node", [(4096, None), (2048, 7)])
def test_size_or_node_that_does_not_exist(root, size, node):
    with pytest.raises(InputError):
        set_pool(FsRoot(str(root)), size, 1, node=node)


def test_negative_count(root):
    with pytest.raises(InputError):
        set_pool(FsRoot(str(root)), 2048, -1)


def _make_read_only(path):
    os.chmod(path, 0o444)
    if os.geteuid() == 0:  # root ignores modes: make the file immutable instead
        if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(path)],
                                                        capture_output=True).returncode != 0:
            pytest.skip("running as root and cannot make a file immutable here")
        return lambda: subprocess.run(["chattr", "-i", str(path)], check=False)
    return lambda: None


def test_read_only_file_is_a_clear_error(root):
    target = root / pool_path(2048, 0).lstrip("/")
    undo = _make_read_only(target)
    try:
        with pytest.raises(PynumaError) as info:
            set_pool(FsRoot(str(root)), 2048, 2000, node=0)
        assert str(target) in str(info.value)
        assert info.value.exit_code == 1
    finally:
        undo()
    assert _nr(root, 2048, 0) == 1024


def test_live_host_needs_root_checked_before_writing(monkeypatch):
    # Reads this machine's real pools but must refuse before any write.
    fs = FsRoot("/")
    info = read_hugepages(fs)
    if not info.sizes:
        pytest.skip("no hugepage pools on this machine")
    size = info.sizes[0]
    writes = []
    monkeypatch.setattr(FsRoot, "write_text", lambda *a: writes.append(a))
    with pytest.raises(AccessDenied, match="needs root"):
        set_pool(fs, size, info.pools[size].total, geteuid=lambda: 1000)
    assert writes == []


def test_fake_root_does_not_need_root(root):
    assert set_pool(FsRoot(str(root)), 2048, 1600, geteuid=lambda: 1000).after == 1600
