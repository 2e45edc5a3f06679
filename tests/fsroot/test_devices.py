"""PCI devices and network links read from synthetic sysfs trees under tmp_path.

The builder lays devices out as the kernel does: real directories under
``sys/devices/pci0000:00/...``, ``sys/bus/pci/devices/<addr>`` and
``sys/class/net/<if>`` as relative symlinks, ``net/<if>/device`` pointing
back at the device, SR-IOV ``virtfnN``/``physfn`` links.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pynuma.discover import devices as dv, net as nt
from pynuma.fsroot import FsRoot
from pynuma.model import Topology


class PciTree:
    """A tiny sysfs with PCI devices and network links."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "sys/bus/pci/devices").mkdir(parents=True)
        (root / "sys/class/net").mkdir(parents=True)
        self.paths = {}

    def device(self, addr, cls="0x020000", vendor="0x8086", device="0x1572", node="0", cpulist="0-3",
               parent=None, driver="i40e", uevent=True, local_cpus=None, **extra) -> Path:
        base = self.paths[parent] if parent else self.root / "sys/devices/pci0000:00"
        d = base / addr
        d.mkdir(parents=True)
        self.paths[addr] = d
        for name, value in (("class", cls), ("vendor", vendor), ("device", device), ("numa_node", node),
                            ("local_cpulist", cpulist), ("local_cpus", local_cpus)):
            if value is not None:
                (d / name).write_text(value + "\n")
        for name, value in extra.items():
            (d / name).write_text(f"{value}\n")
        if uevent and cls is not None:
            lines = [f"DRIVER={driver}"] if driver else []
            lines += [f"PCI_CLASS={int(cls, 16):X}", f"PCI_ID={int(vendor, 16):04X}:{int(device, 16):04X}",
                      f"PCI_SLOT_NAME={addr}"]
            (d / "uevent").write_text("\n".join(lines) + "\n")
        link = self.root / "sys/bus/pci/devices" / addr
        link.symlink_to(os.path.relpath(d, link.parent))
        return d

    def vf(self, pf, index, addr, **kw) -> None:
        d = self.device(addr, **kw)
        (self.paths[pf] / f"virtfn{index}").symlink_to(os.path.relpath(d, self.paths[pf]))
        (d / "physfn").symlink_to(os.path.relpath(self.paths[pf], d))

    def link(self, name, under=None, ifindex=2, mac="02:00:00:00:00:01", state="up", mtu=1500) -> None:
        if under is None:
            d = self.root / "sys/devices/virtual/net" / name
        else:
            d = under / "net" / name
        d.mkdir(parents=True)
        for f, v in (("ifindex", ifindex), ("address", mac), ("operstate", state), ("mtu", mtu)):
            if v is not None:
                (d / f).write_text(f"{v}\n")
        if under is not None:
            (d / "device").symlink_to(os.path.relpath(under, d))
        (self.root / "sys/class/net" / name).symlink_to(os.path.relpath(d, self.root / "sys/class/net"))

    def child(self, addr, name, uevent) -> Path:
        """A non-PCI child device (virtio, USB...) below a PCI function."""
        d = self.paths[addr] / name
        d.mkdir()
        (d / "uevent").write_text(uevent)
        return d


@pytest.fixture
def tree(tmp_path):
    return PciTree(tmp_path)


def _read(tree, warnings=None):
    fs = FsRoot(str(tree.root))
    devs = dv.discover_devices(fs, warnings if warnings is not None else [])
    links = nt.discover_net(fs, devs, warnings if warnings is not None else [])
    return {d.address: d for d in dv.attach_net(devs, links)}, {n.name: n for n in links}


def test_kinds_ids_locality_and_driver(tree):
    tree.device("0000:00:01.0", cls="0x060400", driver="pcieport")
    tree.device("0000:01:00.0", cls="0x030200", vendor="0x10de", device="0x20b0", node="1", cpulist="8-15",
                parent="0000:00:01.0", driver="nvidia")
    tree.device("0000:02:00.0", cls="0x010802", vendor="0x144d", device="0xa808", node="-1", cpulist="0-15",
                driver="nvme")
    devs, _ = _read(tree)
    assert [d for d in devs] == ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0"]
    gpu = devs["0000:01:00.0"]
    assert (gpu.kind, gpu.vendor_id, gpu.device_id, gpu.numa_node, str(gpu.local_cpus), gpu.driver) == \
        ("gpu", 0x10DE, 0x20B0, 1, "8-15", "nvidia")
    nvme = devs["0000:02:00.0"]
    assert nvme.kind == "nvme" and nvme.numa_node is None  # -1: unknown, not guessed
    assert devs["0000:00:01.0"].kind == "other" and devs["0000:00:01.0"].class_name == "bridge"


def test_old_dump_without_uevent_reads_id_files_and_cpumask(tree):
    tree.device("0000:03:00.0", cls="0x120000", vendor="0x1e52", device="0x0001", cpulist=None,
                local_cpus="00000000,000000f0", uevent=False)
    devs, _ = _read(tree)
    acc = devs["0000:03:00.0"]
    assert (acc.kind, acc.vendor_id, str(acc.local_cpus), acc.driver) == ("accelerator", 0x1E52, "4-7", None)


def test_bad_items_are_skipped_or_dropped_with_warnings(tree):
    tree.device("0000:04:00.0", cls="garbage", uevent=False)
    tree.device("0000:05:00.0", cls=None, uevent=False)
    tree.device("0000:06:00.0", node="banana", cpulist="3-1")
    (tree.root / "sys/bus/pci/devices/not-an-address").mkdir()
    warnings = []
    devs, _ = _read(tree, warnings)
    assert list(devs) == ["0000:06:00.0"]
    assert devs["0000:06:00.0"].numa_node is None and devs["0000:06:00.0"].local_cpus is None
    text = "\n".join(warnings)
    for needle in ("0000:04:00.0/class", "0000:05:00.0/class", "0000:06:00.0/numa_node",
                   "0000:06:00.0/local_cpulist", "not-an-address"):
        assert needle in text


def test_sriov_pf_and_vfs_are_linked(tree):
    tree.device("0000:00:02.0", cls="0x060400", driver="pcieport")
    tree.device("0000:07:00.0", parent="0000:00:02.0", sriov_totalvfs=64, sriov_numvfs=2)
    tree.vf("0000:07:00.0", 0, "0000:07:02.0", device="0x154c", driver="iavf")
    tree.vf("0000:07:00.0", 1, "0000:07:02.1", device="0x154c", driver="iavf")
    tree.device("0000:08:00.0", sriov_totalvfs=8, sriov_numvfs=0)
    devs, _ = _read(tree)
    pf = devs["0000:07:00.0"]
    assert (pf.sriov_totalvfs, pf.sriov_numvfs, pf.virtfns) == (64, 2, ("0000:07:02.0", "0000:07:02.1"))
    assert devs["0000:07:02.1"].physfn == "0000:07:00.0" and devs["0000:07:02.1"].is_virtfn
    idle = devs["0000:08:00.0"]
    assert idle.is_physfn and idle.virtfns == () and idle.sriov_numvfs == 0


def test_links_map_to_pci_functions_and_virtual_links_have_no_locality(tree):
    nic = tree.device("0000:09:00.0", node="1", cpulist="8-15")
    tree.link("ens1f0", under=nic, ifindex=3, mac="aa:bb:cc:dd:ee:01", state="up", mtu=9000)
    virtio = tree.device("0000:00:03.0", vendor="0x1af4", device="0x1041", node="0", driver="virtio-pci")
    dev = tree.child("0000:00:03.0", "virtio2", "DRIVER=virtio_net\nMODALIAS=virtio:d00000001v00001AF4\n")
    tree.link("eth0", under=dev, ifindex=4, state="down")
    tree.link("lo", ifindex=1, mac="00:00:00:00:00:00", state="unknown", mtu=65536)
    (tree.root / "sys/class/net/bonding_masters").write_text("\n")
    devs, links = _read(tree)
    assert sorted(links) == ["ens1f0", "eth0", "lo"]
    e = links["ens1f0"]
    assert (e.index, e.mac, e.state, e.mtu, e.pci_address, e.numa_node, e.virtual) == \
        (3, "aa:bb:cc:dd:ee:01", "UP", 9000, "0000:09:00.0", 1, False)
    assert (links["eth0"].pci_address, links["eth0"].numa_node, links["eth0"].state) == ("0000:00:03.0", 0, "DOWN")
    lo = links["lo"]
    assert lo.virtual and lo.pci_address is None and lo.numa_node is None
    assert devs["0000:09:00.0"].net == ("ens1f0",) and devs["0000:00:03.0"].net == ("eth0",)
    assert nic.exists()


def test_no_pci_directory_means_no_devices(tmp_path):
    (tmp_path / "sys").mkdir()
    fs = FsRoot(str(tmp_path))
    assert dv.discover_devices(fs) == ()
    assert nt.discover_net(fs) == ()


def test_netlink_listing_refuses_a_fake_root(tree):
    from pynuma.errors import FakeRootRefused

    with pytest.raises(FakeRootRefused):
        nt.discover_net_netlink(FsRoot(str(tree.root)))


# -- the shared corpus dumps that hold PCI trees -----------------------------
CORPUS = Path(os.environ.get("PYNUMA_CONFORMANCE_DIR", Path(__file__).resolve().parents[3] / "shared/conformance"))


def _corpus_archives():
    folder = CORPUS / "topology"
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*/*.tar.bz2"))


def _has_pci(archive: Path) -> bool:
    import bz2

    # Member names sit in the tar headers: a byte search is much faster than tarfile's member walk.
    return b"/sys/bus/pci/devices/" in bz2.decompress(archive.read_bytes())


def _scratch(tmp_path_factory):
    """A scratch directory, on tmpfs when there is one: the dumps hold thousands of tiny files."""
    import tempfile

    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return tempfile.TemporaryDirectory(prefix="pynuma-pci-", dir="/dev/shm")
    return tempfile.TemporaryDirectory(prefix="pynuma-pci-", dir=tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def pci_dumps(tmp_path_factory):
    import tarfile

    found = [a for a in _corpus_archives() if _has_pci(a)]
    if not found:
        pytest.skip("no shared corpus dump with a PCI tree (../shared/conformance/topology)")
    with _scratch(tmp_path_factory) as scratch:
        roots = []
        for archive in found:
            dest = Path(scratch) / archive.parent.name
            dest.mkdir()
            with tarfile.open(archive) as tar:
                if hasattr(tarfile, "data_filter"):
                    tar.extractall(dest, filter="fully_trusted", numeric_owner=True)  # the shared corpus; fast
                else:  # pragma: no cover - Python without extraction filters
                    tar.extractall(dest, numeric_owner=True)
            (top,) = [p for p in dest.iterdir() if p.is_dir()]
            roots.append(top)
        yield roots


def _raw(path: Path):
    try:
        return path.read_text().strip("\x00\n ")
    except OSError:
        return None


def test_corpus_devices_match_the_raw_files(pci_dumps):
    for root in pci_dumps:
        base = root / "sys/bus/pci/devices"
        warnings = []
        devs = {d.address: d for d in dv.discover_devices(FsRoot(str(root)), warnings)}
        assert sorted(devs) == sorted(os.listdir(base)), root.name
        for addr, dev in devs.items():
            assert dev.class_code == int(_raw(base / addr / "class"), 16)
            assert dev.vendor_id == int(_raw(base / addr / "vendor"), 16)
            node = int(_raw(base / addr / "numa_node"))
            assert dev.numa_node == (None if node < 0 else node)
            assert str(dev.local_cpus) == _raw(base / addr / "local_cpulist")
            total = _raw(base / addr / "sriov_totalvfs")
            assert dev.sriov_totalvfs == (None if total is None else int(total))
        assert warnings == []


def test_corpus_links_map_to_their_pci_function(pci_dumps):
    for root in pci_dumps:
        fs = FsRoot(str(root))
        devs = dv.discover_devices(fs)
        links = nt.discover_net(fs, devs)
        names = sorted(n for n in os.listdir(root / "sys/class/net") if (root / "sys/class/net" / n).is_dir())
        assert [link.name for link in links] == names
        for link in links:
            target = os.path.realpath(root / "sys/class/net" / link.name / "device")
            if os.path.exists(root / "sys/class/net" / link.name / "device"):
                assert link.pci_address == os.path.basename(target)
                assert link.numa_node == {d.address: d for d in devs}[link.pci_address].numa_node
            else:
                assert link.virtual and link.numa_node is None
            assert link.index == int(_raw(root / "sys/class/net" / link.name / "ifindex"))


def test_corpus_topology_carries_devices_through_json(pci_dumps):
    from pynuma.discover import discover

    for root in pci_dumps:
        topo = discover(str(root))
        assert topo.devices and all(d.kind in ("gpu", "nic", "nvme", "accelerator", "other") for d in topo.devices)
        again = Topology.from_dict(json.loads(json.dumps(topo.to_dict())))
        assert again.devices == topo.devices
        assert again.net_interfaces == topo.net_interfaces


def test_topology_cli_shows_devices_under_their_node(pci_dumps):
    import subprocess
    import sys

    for root in pci_dumps:
        run = lambda *a: subprocess.run([sys.executable, "-m", "pynuma", "topology", "--root", str(root), *a],
                                        capture_output=True, text=True, timeout=120)
        devs = {d.address: d for d in dv.discover_devices(FsRoot(str(root)))}
        table = run("--devices")
        assert table.returncode == 0, table.stderr
        assert all(addr in table.stdout for addr in devs)
        assert "(links from sysfs)" in table.stdout  # a dump never goes to netlink
        as_json = json.loads(run("--devices", "--json").stdout)
        assert [d["address"] for d in as_json["devices"]] == sorted(devs)
        full = json.loads(run("--json").stdout)
        assert len(full["devices"]) == len(devs)
        tree = run().stdout.splitlines()
        for addr, dev in devs.items():
            if dev.kind == "other" and not dev.net:
                continue
            (line,) = [i for i, text in enumerate(tree) if f"PCI {addr} " in text]
            heads = ("NUMANode N#", "NUMA locality unknown", "(not reported here)")
            nodes_above = [text for text in tree[:line] if any(h in text for h in heads)]
            if dev.numa_node is None:
                assert "NUMA locality unknown" in nodes_above[-1]
            else:  # under its node, or in the list of devices on nodes the cpuset hides
                assert (f"NUMANode N#{dev.numa_node} " in nodes_above[-1]
                        or f"NUMA node {dev.numa_node} (not reported here)" in nodes_above[-1])
