"""Device parsing and classification: pure functions, no I/O."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pynuma.cpuset import CPUSet
from pynuma.discover import devices as dv
from pynuma.model_devices import KINDS, NetInterface, PciDevice


@pytest.mark.parametrize("text, value", [
    ("0x8086\n", 0x8086), ("0x020000\n", 0x020000), ("1af4", 0x1AF4), ("0X0b4000\x00\n", 0x0B4000),
])
def test_parse_hex_accepts_sysfs_ids(text, value):
    assert dv.parse_hex(text) == value


@pytest.mark.parametrize("text", ["", "0x", "0xZZ", "12 34", "0x123456789", "-0x1"])
def test_parse_hex_rejects_garbage(text):
    with pytest.raises(ValueError):
        dv.parse_hex(text)


@pytest.mark.parametrize("text, value", [("0\n", 0), ("3", 3), ("-1\n", None), ("12\x00", 12)])
def test_parse_numa_node_unknown_is_none(text, value):
    assert dv.parse_numa_node(text) == value


@pytest.mark.parametrize("text", ["", "-2", "x", "1-", "--1", "1.5"])
def test_parse_numa_node_rejects(text):
    with pytest.raises(ValueError):
        dv.parse_numa_node(text)


def test_parse_uevent_keys_and_junk_lines():
    text = "DRIVER=i40e\nPCI_CLASS=20000\nnot a pair\nPCI_SLOT_NAME=0000:60:00.0\n\x00"
    assert dv.parse_uevent(text) == {"DRIVER": "i40e", "PCI_CLASS": "20000", "PCI_SLOT_NAME": "0000:60:00.0"}


@pytest.mark.parametrize("code, kind", [
    (0x030000, "gpu"), (0x030200, "gpu"), (0x038000, "gpu"),
    (0x020000, "nic"), (0x020700, "nic"), (0x028000, "nic"),
    (0x010802, "nvme"), (0x010803, "nvme"),
    (0x120000, "accelerator"), (0x0B4000, "accelerator"), (0x400000, "accelerator"),
    (0x060400, "other"), (0x010601, "other"), (0x0C0330, "other"), (0xFFFF00, "other"),
])
def test_classify_kinds(code, kind):
    got, name = dv.classify(code)
    assert got == kind
    assert name and isinstance(name, str)


@given(st.integers(min_value=0, max_value=0xFFFFFF))
@settings(max_examples=200)
def test_classify_total_and_consistent(code):
    kind, name = dv.classify(code)
    assert kind in KINDS
    base = code >> 16
    if base == 0x02:
        assert kind == "nic"
    if base == 0x03:
        assert kind == "gpu"
    assert name == dv.BASE_CLASSES.get(base, "unknown class")


def _dev(addr, **kw):
    base = dict(class_code=0x020000, vendor_id=0x8086, device_id=0x1572, kind="nic", class_name="network controller",
                numa_node=0, local_cpus=CPUSet.parse("0-3"))
    base.update(kw)
    return PciDevice(addr, **base)


def test_link_virtfns_fills_pf_from_vf_links():
    pf = _dev("0000:01:00.0", sriov_totalvfs=8, sriov_numvfs=2)
    vfs = [_dev("0000:01:02.1", physfn="0000:01:00.0"), _dev("0000:01:02.0", physfn="0000:01:00.0")]
    other = _dev("0000:02:00.0")
    out = {d.address: d for d in dv.link_virtfns([pf] + vfs + [other])}
    assert out["0000:01:00.0"].virtfns == ("0000:01:02.0", "0000:01:02.1")
    assert out["0000:01:00.0"].is_physfn and not out["0000:01:00.0"].is_virtfn
    assert out["0000:01:02.0"].is_virtfn
    assert out["0000:02:00.0"].virtfns == ()


def test_attach_net_names_links_per_device():
    devs = [_dev("0000:01:00.0"), _dev("0000:02:00.0")]
    links = [NetInterface("eth1", 3, None, "UP", 1500, "0000:01:00.0", 0, False),
             NetInterface("eth0", 2, None, "UP", 1500, "0000:01:00.0", 0, False),
             NetInterface("lo", 1, None, "UNKNOWN", 65536, None, None, True)]
    out = dv.attach_net(devs, links)
    assert out[0].net == ("eth0", "eth1")
    assert out[1].net == ()


_addr = st.builds(lambda d, b, s, f: f"{d:04x}:{b:02x}:{s:02x}.{f}", st.integers(0, 0xFFFF),
                  st.integers(0, 255), st.integers(0, 31), st.integers(0, 7))
_opt_cpus = st.one_of(st.none(), st.sets(st.integers(0, 300), max_size=20).map(CPUSet))


@given(addr=_addr, code=st.integers(0, 0xFFFFFF), vendor=st.one_of(st.none(), st.integers(0, 0xFFFF)),
       node=st.one_of(st.none(), st.integers(0, 64)), cpus=_opt_cpus,
       total=st.one_of(st.none(), st.integers(0, 256)), physfn=st.one_of(st.none(), _addr),
       net=st.lists(st.text("abcdef0123", min_size=1, max_size=8), max_size=3).map(tuple))
@settings(max_examples=200)
def test_pci_device_json_round_trip(addr, code, vendor, node, cpus, total, physfn, net):
    kind, name = dv.classify(code)
    dev = PciDevice(addr, code, vendor, 0x1234, kind, name, node, cpus, "drv", total,
                    None if total is None else min(total, 3), physfn, (), net)
    assert PciDevice.from_dict(dev.to_dict()) == dev


def test_net_interface_json_round_trip():
    link = NetInterface("eth0", 4, "02:fc:00:00:00:01", "UP", 1400, "0000:00:03.0", None, False, "netlink")
    assert NetInterface.from_dict(link.to_dict()) == link
    assert link.to_dict()["numa_node"] is None


@pytest.mark.parametrize("name, ok", [("0000:00:1f.3", True), ("10000:3a:00.0", True), ("0000:60:00.1", True),
                                      ("0000:00:1f.8", False), ("0000:00:1f", False), ("000:00:1f.0", False),
                                      ("0000:0g:00.0", False), ("pci0000:00", False), ("0000:00:00.00", False),
                                      ("0000:00:00.", False)])
def test_is_pci_address(name, ok):
    assert dv.is_pci_address(name) is ok
