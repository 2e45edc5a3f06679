"""pynuma.cgroups.detect: mode from /proc/mounts, driver and kubepods from the tree."""
from __future__ import annotations

import os

import pytest

from pynuma.cgroups.detect import (CGROUPFS, HYBRID, SYSTEMD, V1, V2, detect, layout_from_mounts,
                                   parse_mounts)
from pynuma.cgroups.synthetic import build_tree
from pynuma.errors import ParseError, Unsupported
from pynuma.fsroot import FsRoot

V2_MOUNTS = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev 0 0\n"
HYBRID_MOUNTS = """tmpfs /sys/fs/cgroup tmpfs ro 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0
cgroup /sys/fs/cgroup/systemd cgroup rw,xattr,name=systemd 0 0
cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0
"""


def test_parse_mounts_keeps_cgroup_lines_and_unescapes():
    text = "proc /proc proc rw 0 0\ncgroup /sys/fs/cgroup/my\\040dir cgroup rw,memory 0 0\n"
    assert parse_mounts(text) == [("/sys/fs/cgroup/my dir", "cgroup", ["rw", "memory"])]


def test_parse_mounts_rejects_truncated_cgroup_line():
    with pytest.raises(ValueError):
        parse_mounts("cgroup /sys/fs/cgroup/memory cgroup\n")


def test_v2_unified():
    layout = layout_from_mounts(parse_mounts(V2_MOUNTS))
    assert layout.mode == V2 and layout.version == 2
    assert layout.hierarchy("memory") == layout.hierarchy("pids") == "/sys/fs/cgroup"


def test_hybrid_uses_v1_and_comounted_controllers():
    layout = layout_from_mounts(parse_mounts(HYBRID_MOUNTS))
    assert layout.mode == HYBRID and layout.version == 1
    assert layout.hierarchy("cpuacct") == "/sys/fs/cgroup/cpu,cpuacct"
    assert layout.primary == "/sys/fs/cgroup/memory"
    assert layout.unified == "/sys/fs/cgroup/unified"
    assert any("hybrid" in r for r in layout.reasons)


def test_v1_only_and_none():
    v1 = "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
    assert layout_from_mounts(parse_mounts(v1)).mode == V1
    with pytest.raises(Unsupported):
        layout_from_mounts(parse_mounts("proc /proc proc rw 0 0\n"))


@pytest.mark.parametrize("mode", [V1, V2, HYBRID])
@pytest.mark.parametrize("driver", [SYSTEMD, CGROUPFS])
def test_detect_on_trees(tmp_path, mode, driver):
    build_tree(str(tmp_path), mode=mode, driver=driver)
    layout = detect(FsRoot(str(tmp_path)))
    assert (layout.mode, layout.driver) == (mode, driver)
    assert layout.kubepods == ("/kubepods.slice" if driver == SYSTEMD else "/kubepods")
    assert layout.reasons[-1].endswith(f"{driver} cgroup driver")


def test_detect_custom_cgroup_root(tmp_path):
    build_tree(str(tmp_path), mode=V2, driver=CGROUPFS)
    cg = tmp_path / "sys/fs/cgroup"
    os.makedirs(cg / "custom")
    os.rename(cg / "kubepods", cg / "custom/kubepods")
    assert detect(FsRoot(str(tmp_path))).kubepods is None
    assert detect(FsRoot(str(tmp_path)), cgroup_root="/custom").kubepods == "/custom/kubepods"


def test_detect_errors_name_the_file(tmp_path):
    with pytest.raises(Unsupported, match="mount table"):
        detect(FsRoot(str(tmp_path)))
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/mounts").write_text("cgroup /x cgroup\n")
    with pytest.raises(ParseError, match="proc/mounts"):
        detect(FsRoot(str(tmp_path)))


def test_detection_path_is_logged(tmp_path, caplog):
    import logging

    build_tree(str(tmp_path), mode=HYBRID, driver=SYSTEMD)
    with caplog.at_level(logging.DEBUG, logger="pynuma.cgroups"):
        detect(FsRoot(str(tmp_path)))
    text = caplog.text
    assert "hybrid mode" in text and "systemd cgroup driver" in text
