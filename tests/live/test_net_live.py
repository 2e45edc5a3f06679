"""Network links of this host through pyroute2 (netlink), checked against the kernel's sysfs view."""
from __future__ import annotations

import os

import pytest

from pynuma.discover import devices as dv, net as nt
from pynuma.fsroot import FsRoot

pytest.importorskip("pyroute2")


def _sysfs(name, f):
    with open(f"/sys/class/net/{name}/{f}") as fh:  # the test's own independent read
        return fh.read().strip()


def _proc_net_names():
    """Links of this process's network namespace (``/proc/self/net/dev``), or None."""
    try:
        with open("/proc/self/net/dev") as f:
            return sorted(line.split(":", 1)[0].strip() for line in f.readlines()[2:] if ":" in line)
    except OSError:
        return None


@pytest.fixture(scope="module")
def live():
    # sysfs shows the links of the namespace that mounted it: a sandbox with its own network
    # namespace but the host's /sys (bind-mounted) has two different lists, and no test can agree
    sysfs = sorted(n for n in os.listdir("/sys/class/net") if os.path.isdir(f"/sys/class/net/{n}"))
    proc = _proc_net_names()
    if proc is not None and proc != sysfs:
        pytest.skip(f"/sys/class/net {sysfs} belongs to another network namespace than this process {proc}")
    fs = FsRoot("/")
    devs = dv.discover_devices(fs)
    try:
        links = nt.discover_net_netlink(fs, devs)
    except OSError as err:  # netlink socket refused by a sandbox
        pytest.skip(f"netlink unavailable here: {err}")
    return devs, links


def test_netlink_lists_the_links_sysfs_shows(live):
    _, links = live
    names = sorted(n for n in os.listdir("/sys/class/net") if os.path.isdir(f"/sys/class/net/{n}"))
    assert sorted(link.name for link in links) == names
    assert all(link.source == "netlink" for link in links)


def test_netlink_fields_agree_with_sysfs(live):
    _, links = live
    for link in links:
        assert link.index == int(_sysfs(link.name, "ifindex"))
        assert link.mtu == int(_sysfs(link.name, "mtu"))
        assert (link.mac or "").lower() == _sysfs(link.name, "address").lower()
        assert link.state == _sysfs(link.name, "operstate").upper()


def test_netlink_and_sysfs_listings_agree_on_locality(live):
    devs, links = live
    from_sysfs = {n.name: n for n in nt.discover_net(FsRoot("/"), devs)}
    for link in links:
        other = from_sysfs[link.name]
        assert (link.pci_address, link.numa_node, link.virtual) == (other.pci_address, other.numa_node, other.virtual)


def test_loopback_is_virtual_and_has_no_locality(live):
    _, links = live
    lo = {link.name: link for link in links}.get("lo")
    if lo is None:
        pytest.skip("no loopback link in this network namespace")
    assert lo.virtual and lo.pci_address is None and lo.numa_node is None


def test_pci_backed_links_point_at_listed_pci_functions(live):
    devs, links = live
    addresses = {d.address for d in devs}
    backed = [link for link in links if link.pci_address is not None]
    for link in backed:
        assert link.pci_address in addresses
        real = os.path.realpath(f"/sys/class/net/{link.name}/device")
        assert link.pci_address in real.split("/")


def test_topology_devices_on_the_live_host_uses_netlink(live):
    import json
    import subprocess
    import sys

    run = lambda *a: subprocess.run([sys.executable, "-m", "pynuma", "topology", *a], capture_output=True,
                                    text=True, timeout=120)
    table = run("--devices")
    assert table.returncode == 0, table.stderr
    assert "(links from netlink)" in table.stdout
    data = json.loads(run("--devices", "--json").stdout)
    assert {n["source"] for n in data["net_interfaces"]} == {"netlink"}
    plain = json.loads(run("--json").stdout)  # the default path stays on sysfs (no pyroute2 import)
    assert {n["source"] for n in plain["net_interfaces"]} <= {"sysfs"}
    assert sorted(n["name"] for n in plain["net_interfaces"]) == sorted(n["name"] for n in data["net_interfaces"])
