"""Node addresses and link events: netlink (pyroute2) on the live host, sysfs on a dump.

The netlink cases run in a private network namespace (``unshare -n``) with
``ifb`` links the test creates there, so the host's network is only read.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pynuma.discover.addresses import node_addresses
from pynuma.errors import FakeRootRefused
from tests.fixtures.sysfs_builder import put

PROJECT = Path(__file__).resolve().parents[2]


def in_netns(script: str) -> subprocess.CompletedProcess:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip")
    probe = subprocess.run(["unshare", "-n", "ip", "link", "add", "probe0", "type", "ifb"], capture_output=True,
                           text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no private network namespace with ifb links here: {probe.stderr.strip()}")
    code = f"import sys\nsys.path.insert(0, {str(PROJECT)!r})\n" + script
    return subprocess.run(["unshare", "-n", sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


SETUP = textwrap.dedent("""
    import json, subprocess, threading, time
    from pynuma.discover.addresses import node_addresses, link_events
    def sh(cmd):
        subprocess.run(cmd, shell=True, check=True)
    sh("ip link add a0 type ifb && ip link add b0 type ifb && ip link add c0 type ifb")
    sh("ip addr add 10.9.8.7/24 dev a0 && ip addr add fd12::5/64 dev a0 nodad && ip addr add 10.1.1.1/16 dev b0")
    sh("ip addr add 10.5.5.5/24 dev c0")               # c0 stays down: not an address of the node
    sh("ip addr add 10.0.0.9/8 dev lo && ip link set lo up")  # loopback: never
    sh("ip link set a0 up && ip link set b0 up && ip route add default dev b0")
""")


def test_internal_ips_from_netlink_default_route_first():
    res = in_netns(SETUP + "print(json.dumps([a.to_dict() for a in node_addresses()]))")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    internal = [(r["interface"], r["address"], r["family"], r["prefixlen"]) for r in rows if r["type"] == "InternalIP"]
    # b0 carries the default route: its address is the one the kubelet would pick; then a0, IPv4 before IPv6
    assert internal == [("b0", "10.1.1.1", 4, 16), ("a0", "10.9.8.7", 4, 24), ("a0", "fd12::5", 6, 64)]
    assert all(r["state"] == "UNKNOWN" for r in rows if r["type"] == "InternalIP")  # ifb links say so
    assert rows[-1]["type"] == "Hostname" and rows[-1]["address"]


def test_link_events_from_netlink():
    script = SETUP + textwrap.dedent("""
    events = link_events(timeout=1.0)  # subscribed from here on
    sh("ip link set a0 down; ip addr del 10.1.1.1/16 dev b0; ip addr add 10.1.2.3/16 dev b0")
    print(json.dumps([list(e.as_tuple()) for e in events]))
    """)
    res = in_netns(script)
    assert res.returncode == 0, res.stderr
    events = [tuple(e) for e in json.loads(res.stdout)]
    assert ("link", "a0", "DOWN", None) in events
    assert ("address-removed", "a0", None, "fd12::5") in events
    removed = events.index(("address-removed", "b0", None, "10.1.1.1"))
    assert events.index(("address-added", "b0", None, "10.1.2.3")) > removed


def test_live_host_matches_ip_addr():
    if shutil.which("ip") is None:
        pytest.skip("needs ip")
    shown = json.loads(subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True, timeout=30).stdout)
    want = set()
    for link in shown:
        if "UP" not in link.get("flags", []) or "LOOPBACK" in link.get("flags", []):
            continue
        for a in link.get("addr_info", []):
            if a.get("scope") == "global" and not a.get("tentative") and not a.get("dadfailed"):
                want.add((link["ifname"], a["local"], a["prefixlen"]))
    got = {(a.interface, a.address, a.prefixlen) for a in node_addresses() if a.type == "InternalIP"}
    assert got == want


def test_a_dump_gives_links_and_their_state_but_no_addresses(tmp_path):
    put(tmp_path, "/sys/class/net/lo/operstate", "unknown\n")
    put(tmp_path, "/sys/class/net/lo/flags", "0x9\n")
    put(tmp_path, "/sys/class/net/eth0/operstate", "up\n")
    put(tmp_path, "/sys/class/net/eth0/flags", "0x1003\n")
    put(tmp_path, "/sys/class/net/eth1/operstate", "down\n")
    put(tmp_path, "/sys/class/net/bonding_masters", "")
    put(tmp_path, "/proc/sys/kernel/hostname", "node-a\n")
    rows = node_addresses(str(tmp_path))
    assert [(a.type, a.address, a.interface, a.state) for a in rows] == [
        ("InternalIP", None, "eth0", "UP"), ("InternalIP", None, "eth1", "DOWN"), ("Hostname", "node-a", None, None)]
    (tmp_path / "empty").mkdir()
    assert node_addresses(str(tmp_path / "empty")) == []  # nothing known: no links, no hostname
    with pytest.raises(FakeRootRefused):
        from pynuma.discover.addresses import link_events

        next(link_events(root=str(tmp_path)))


def test_pyroute2_is_imported_only_for_netlink(tmp_path):
    put(tmp_path, "/sys/class/net/eth0/operstate", "up\n")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(PROJECT)!r})
        from pynuma.discover.addresses import node_addresses
        node_addresses({str(tmp_path)!r})
        before = "pyroute2" in sys.modules
        node_addresses()
        print(before, "pyroute2" in sys.modules)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]
