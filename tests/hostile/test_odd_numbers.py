"""Numbers no kernel writes: digits :meth:`str.isdigit` accepts but ``int()`` refuses ("²"), more
digits than ``int()`` converts, negative counts, mount points no kernel writes, a cpuset naming no
online CPU.  Each is a warning, a skipped item or one error line naming the file, never a traceback."""
from __future__ import annotations

import pytest

from pynuma.agent.capacity import discover_capacity
from pynuma.apply.files import same_value
from pynuma.cgroups.detect import parse_mounts as cgroup_mounts
from pynuma.cgroups.synthetic import build_tree, make_pods
from pynuma.discover import discover
from pynuma.discover.devices import parse_numa_node
from pynuma.errors import ParseError
from pynuma.fsroot import FsRoot
from pynuma.meminfo import mem_total
from pynuma.parse import ascii_uint, parse_mounts
from pynuma.procs.parse import parse_kb, parse_uid
from tests.fixtures.sysfs_builder import Machine, put

from ._child import forked

SUPERSCRIPT_TWO = "\u00b2"  # a digit to str.isdigit(), not to int()
ARABIC_THREE = "\u0663"  # a digit to int() too: still not what a kernel writes
TOO_LONG = "9" * 5000  # more digits than int() converts


@pytest.mark.parametrize("text", [SUPERSCRIPT_TWO, ARABIC_THREE, TOO_LONG, "", "-1", "1 ", "0x10"])
def test_only_ascii_digits_are_a_number(text):
    assert ascii_uint(text) is None


def test_ascii_digits_are_a_number_up_to_the_digits_allowed():
    assert ascii_uint("0") == 0 and ascii_uint("18446744073709551615") == 2 ** 64 - 1
    assert ascii_uint("123", 2) is None


@pytest.mark.parametrize("value", [SUPERSCRIPT_TWO, TOO_LONG])
def test_process_and_cgroup_numbers(value):
    assert parse_uid(f"{value}\t0\t0\t0") is None
    assert parse_kb(f"{value} kB") is None
    assert not same_value("memory.max", value, "max")  # read back from a cgroup file: not a limit
    assert not same_value("memory.max", value, "4096")


@pytest.mark.parametrize("text", [SUPERSCRIPT_TWO, TOO_LONG, "99999999999999999999"])
def test_a_device_numa_node_no_machine_has_is_refused(text):
    with pytest.raises(ValueError, match="invalid numa_node"):
        parse_numa_node(text)


@pytest.mark.parametrize("value", [SUPERSCRIPT_TWO, TOO_LONG])
def test_meminfo_total_that_is_no_number_is_unknown(tmp_path, value):
    put(tmp_path, "/proc/meminfo", f"MemTotal: {value} kB\n")
    assert mem_total(FsRoot(str(tmp_path))) is None


@pytest.mark.parametrize("value", [SUPERSCRIPT_TWO, TOO_LONG])
def test_commands_reading_meminfo_stay_one_line(tmp_path, value):
    root = tmp_path / "root"
    build_tree(str(root), mode="v2", driver="systemd", pods=make_pods(1))
    put(root, "/proc/meminfo", f"MemTotal: {value} kB\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text("metadata: {name: p}\nspec: {containers: [{name: c}]}\n")
    for argv in (["qos", "--root", str(root), str(pod)], ["cgroups", "--root", str(root)]):
        o = forked(argv)
        err = o.stderr.decode()
        assert o.returncode in (0, 1, 2) and "Traceback" not in err and err.count("\n") <= 1, (argv, err)


def test_a_network_number_too_long_to_convert_is_no_number(tmp_path):
    root = Machine().write(tmp_path / "root")
    put(root, "/sys/class/net/eth0/ifindex", TOO_LONG + "\n")
    put(root, "/sys/class/net/eth0/mtu", SUPERSCRIPT_TWO + "\n")
    (net,) = discover(root).net_interfaces
    assert net.name == "eth0" and net.index is None and net.mtu is None


def test_pids_of_an_evicted_pod_skip_what_is_no_pid(tmp_path):
    from pynuma.apply.evict import _pids
    from pynuma.apply.tree import open_tree

    pods = make_pods(1)
    build_tree(str(tmp_path), mode="v2", driver="systemd", pods=pods)
    tree = open_tree(FsRoot(str(tmp_path)), allow_fake_root=True)
    cgroup = tree.find_pod(pods[0].uid)[0]
    procs = next(d for d in tree.dirs(cgroup))
    put(tmp_path, procs + "/cgroup.procs", f"12\n{SUPERSCRIPT_TWO}\n{TOO_LONG}\n")
    assert 12 in _pids(tree, cgroup)


@pytest.mark.parametrize("point", ["/sys/fs/cgroup\x00/etc", "/sys/fs/cgroup/../../etc", "sys/fs/cgroup",
                                   "/sys/fs/./cgroup"])
def test_a_mount_point_no_kernel_writes_is_skipped(point):
    line = f"cgroup2 {point} cgroup2 rw 0 0\n"
    assert parse_mounts(line) == [] and cgroup_mounts(line) == []
    assert parse_mounts("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")[0][1] == "/sys/fs/cgroup"


def test_native_and_pure_agree_on_a_mount_table_with_a_nul(tmp_path):
    build_tree(str(tmp_path), mode="v2", driver="systemd", pods=make_pods(1))
    put(tmp_path, "/proc/mounts", "cgroup2 /sys/fs/cgroup\x00/etc cgroup2 rw 0 0\n")
    import os
    import subprocess
    import sys

    outcomes = [subprocess.run([sys.executable, "-m", "pynuma", "cgroups", "--root", str(tmp_path)], capture_output=True,
                               timeout=60, env={**os.environ, "PYNUMA_PURE": pure}) for pure in ("0", "1")]
    for o in outcomes:
        assert o.returncode == 1 and o.stderr.decode().count("\n") == 1
        assert b"no cgroup or cgroup2 mount found" in o.stderr and str(tmp_path).encode() in o.stderr
    assert outcomes[0].stderr == outcomes[1].stderr


def test_capacity_takes_online_cpus_as_discovery_does_and_refuses_negative_counts(tmp_path):
    root = Machine(packages=1, cores_per_node=4).write(tmp_path / "root")
    put(root, "/sys/devices/system/cpu/online", "\n")  # says nothing: the cpuN directories do
    put(root, "/proc/meminfo", "MemTotal: 1024 kB\n")
    fs = FsRoot(root)
    assert str(discover_capacity(fs, "/var/lib/kubelet", 110)["cpu"]) == "4"
    put(root, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "-5\n")
    with pytest.raises(ParseError, match="nr_hugepages: expected a count"):
        discover_capacity(fs, "/var/lib/kubelet", 110)


def test_a_negative_node_pool_is_skipped_with_a_warning(tmp_path):
    root = Machine(hugepages={2048: 4}).write(tmp_path / "root")
    put(root, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "-5\n")
    topo = discover(root)
    assert 2048 not in topo.numa_nodes[0].hugepages
    assert any("negative count -5; 2048 kB pool skipped" in w for w in topo.warnings)


def test_a_cpuset_naming_no_online_cpu_is_not_applied(tmp_path):
    root = Machine(packages=1, cores_per_node=4).write(tmp_path / "root")
    put(root, "/proc/mounts", "none /dev/cpuset cpuset rw 0 0\n")
    put(root, "/proc/self/cpuset", "/job\n")
    put(root, "/dev/cpuset/job/cpus", "100-200\n")
    put(root, "/dev/cpuset/job/mems", "0\n")
    topo = discover(root)
    assert len(topo.online_cpus) == 4
    assert any(w.endswith("/dev/cpuset/job/cpus: names none of the online CPUs; not applied") for w in topo.warnings)


def test_a_topology_id_no_kernel_int_holds_is_ignored_and_the_saved_file_loads(tmp_path):
    from pynuma.model import Topology

    root = Machine(packages=1, cores_per_node=2).write(tmp_path / "root")
    put(root, "/sys/devices/system/cpu/cpu0/topology/physical_package_id", str(1 << 40) + "\n")
    topo = discover(root)
    assert any(f"{1 << 40} is no id the kernel can hold" in w for w in topo.warnings)
    assert Topology.from_dict(topo.to_dict()) == topo  # what is saved loads back
