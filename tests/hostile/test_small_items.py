"""The smaller reliability items: control characters never reach the terminal, an all-NUL
``cpu/online`` is a warning (not "0 CPUs")."""
from __future__ import annotations

import os

import pytest

from pynuma.cgroups.kubepods import pod_cgroup_name
from pynuma.cgroups.synthetic import build_tree, make_pods
from pynuma.cli._common import printable

from ._child import forked

EVIL = "\x1b[31mEVIL\x07\x1b]0;pwned\x07\u202e\x85"


@pytest.fixture
def cgroup_tree(tmp_path):
    pods = make_pods(2)
    build_tree(str(tmp_path), pods=pods)
    kp = tmp_path / "sys/fs/cgroup/kubepods.slice"
    pod = pod_cgroup_name(pods[0].uid, pods[0].qos, "systemd")
    cont = kp / pod / f"cri-containerd-{EVIL}.scope"
    cont.mkdir()
    (cont / "memory.current").write_text("5\n")
    (kp / f"kubepods-burstable.slice/kubepods-burstable-pod{EVIL}.slice").mkdir()
    return str(tmp_path)


def _no_controls(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0 or c == "\u202e"]
    assert not bad, f"control characters reached the terminal: {bad!r}"


@pytest.mark.parametrize("argv", [["cgroups"], ["cgroups", "--explain"],
                                  ["eviction", "--from-cgroups", "--eviction-hard", "memory.available<1E"]])
def test_cgroup_names_are_escaped_in_text_output(cgroup_tree, argv):
    o = forked([*argv, "--root", cgroup_tree])
    assert o.returncode == 0, o.stderr
    out = o.stdout.decode()
    _no_controls(out)
    assert printable(EVIL) in out  # shown, escaped: the name is still recognisable


def test_json_output_keeps_the_exact_names(cgroup_tree):
    import json

    o = forked(["cgroups", "--root", cgroup_tree, "--json"])
    doc = json.loads(o.stdout)
    ids = [c["id"] for p in doc["pods"] for c in p["containers"]]
    assert any(EVIL in i for i in ids)


def test_error_messages_stay_one_line(tmp_path):
    bad = tmp_path / "pod\nname\x1b[2J.yaml"
    bad.write_text("{")
    o = forked(["qos", str(bad)])
    err = o.stderr.decode()
    assert o.returncode == 2 and len(err.splitlines()) == 1
    _no_controls(err)


def test_printable_escapes_only_controls():
    assert printable("pod-ä.ok") == "pod-ä.ok"
    assert printable("a\nb\tc\x1b") == "a\\x0ab\\x09c\\x1b"
    assert printable("a\nb", lines=True) == "a\nb"
    assert printable("\u202e\u2066") == "\\u202e\\u2066"


@pytest.mark.parametrize("text", ["\0\0\0\0", "", "\n", "\0\n"])
@pytest.mark.parametrize("pure", ["0", "1"])
def test_empty_or_nul_cpu_online_warns_and_falls_back(tmp_path, text, pure, monkeypatch):
    import json

    from tests.fixtures.sysfs_builder import Machine

    Machine(cores_per_node=4).write(tmp_path)
    (tmp_path / "sys/devices/system/cpu/online").write_text(text)
    monkeypatch.setenv("PYNUMA_PURE", pure)
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "pynuma", "topology", "--root", str(tmp_path), "--json"],
                       capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["online_cpus"] == "0-3"
    assert any("cpu/online: lists no CPU" in w for w in doc["warnings"])
