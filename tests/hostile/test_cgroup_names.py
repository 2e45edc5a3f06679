"""A pod uid, container name or cgroup root never climbs out of the cgroup it names."""
from __future__ import annotations

import json
import os

import pytest

from pynuma import cli
from tests.fixtures import cgroupfs


def _pod(uid: str, container: str) -> dict:
    res = {"cpu": "1", "memory": "1Gi"}
    return {"metadata": {"name": "web", "uid": uid},
            "spec": {"containers": [{"name": container, "resources": {"requests": res, "limits": res}}]}}


@pytest.fixture
def root(tmp_path):
    root = cgroupfs.build(str(tmp_path / "root"), "v2", "cgroupfs")
    (tmp_path / "root/proc/meminfo").write_text("MemTotal: 8388608 kB\n")
    return root


def _tree(root):
    return sorted((os.path.relpath(d, root), sorted(f)) for d, _, f in os.walk(root))


@pytest.mark.parametrize("uid,container", [
    ("11-22", ".."), ("11-22", "../../../evil"), ("11-22", "a/b"), ("../../../../outside/x", "app"),
    ("a\nb", "app"), ("..", "app"),
], ids=["container ..", "container climbing", "container with /", "uid climbing", "uid with newline", "uid .."])
def test_apply_refuses_names_that_are_not_one_cgroup(root, tmp_path, capsys, uid, container):
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(_pod(uid, container)))
    before = _tree(root)
    assert cli.main(["apply", str(pod), "--root", root, "--target-root"]) == 2
    err = capsys.readouterr().err
    assert "not usable in a cgroup name" in err and err.count("\n") == 1, err
    assert _tree(root) == before  # nothing was created or written


def test_evict_refuses_a_uid_that_climbs_to_the_tier(root, tmp_path, capsys):
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(_pod("11-22", "app")))
    assert cli.main(["apply", str(pod), "--root", root, "--target-root"]) == 0
    kill = os.path.join(root, "sys/fs/cgroup/kubepods/cgroup.kill")
    open(kill, "w").close()
    before = _tree(root)
    for uid in ("11-22/..", "11-22/../..", "11-22/app"):
        assert cli.main(["evict", uid, "--root", root, "--target-root"]) == 2, uid
    assert _tree(root) == before and open(kill).read() == ""
    assert "not usable in a cgroup name" in capsys.readouterr().err


def test_a_cgroup_root_may_not_climb(root, tmp_path, capsys):
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(_pod("11-22", "app")))
    assert cli.main(["apply", str(pod), "--root", root, "--target-root", "--cgroup-root", "../../../etc",
                     "--cgroup-driver", "cgroupfs"]) == 2
    assert "may not climb" in capsys.readouterr().err
