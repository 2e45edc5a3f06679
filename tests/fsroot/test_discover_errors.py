"""Bad input under the root: clear errors naming the file, or tolerated items with warnings."""
from __future__ import annotations

import pytest

from pynuma.cpuset import CPUSet
from pynuma.discover import discover
from pynuma.errors import InputError, ParseError, PynumaError
from tests.fixtures.sysfs_builder import Machine, chmod_unreadable, put, remove


@pytest.fixture
def root(tmp_path):
    return Machine(packages=2, cores_per_node=2, threads=2).write(tmp_path / "root")


@pytest.mark.parametrize("text", ["3-1\n", "x\n", "0-\n", "1,,2\n"])
def test_bad_online_cpulist_names_the_file(root, text):
    put(root, "/sys/devices/system/cpu/online", text)
    with pytest.raises(ParseError) as err:
        discover(root)
    assert err.value.path.endswith("/sys/devices/system/cpu/online")
    assert str(err.value).startswith(str(root))


@pytest.mark.parametrize("text", ["3-1", "x", "zz-top"])
def test_bad_node_cpulist_names_the_file(root, text):
    put(root, "/sys/devices/system/node/node1/cpulist", text)
    with pytest.raises(ParseError, match="node1/cpulist"):
        discover(root)


def test_garbage_topology_mask_names_the_file(root):
    put(root, "/sys/devices/system/cpu/cpu2/topology/core_cpus", "not-hex\n")
    with pytest.raises(ParseError, match="cpu2/topology/core_cpus"):
        discover(root)


def test_garbage_cgroup_cpus_names_the_file(root):
    put(root, "/proc/mounts", "cgroup /cg cgroup rw,cpuset 0 0\n")
    put(root, "/proc/self/cpuset", "/\n")
    put(root, "/cg/cpuset.cpus", "4-2\n")
    with pytest.raises(ParseError, match="cg/cpuset.cpus"):
        discover(root)


def test_garbage_cpu_online_flag(tmp_path):
    root = Machine(packages=1, cores_per_node=2, online_file=False).write(tmp_path)
    put(root, "/sys/devices/system/cpu/cpu1/online", "maybe\n")
    with pytest.raises(ParseError, match="cpu1/online"):
        discover(root)


def test_empty_cpu_online_flag_counts_as_online(tmp_path):
    root = Machine(packages=1, cores_per_node=2, online_file=False).write(tmp_path)
    put(root, "/sys/devices/system/cpu/cpu1/online", "")
    assert discover(root).online_cpus == CPUSet([0, 1])


def test_truncated_meminfo_is_a_warning(root):
    put(root, "/sys/devices/system/node/node1/meminfo", "Node 1 MemTot")
    topo = discover(root)
    assert topo.node(1).memory_total == 0
    assert any("node1/meminfo" in w for w in topo.warnings)


def test_bad_distance_row_drops_distances_with_warning(root):
    put(root, "/sys/devices/system/node/node0/distance", "10 20 30\n")
    topo = discover(root)
    assert topo.distances is None
    assert any("node0/distance: 3 values, expected 2" in w for w in topo.warnings)


def test_garbage_cache_file_skips_that_cache(root):
    put(root, "/sys/devices/system/cpu/cpu0/cache/index2/size", "lots\n")
    topo = discover(root)
    assert any("cpu0/cache/index2" in w for w in topo.warnings)
    assert not any(c.level == 2 and 0 in c.cpus for c in topo.caches)
    assert any(c.level == 2 and 2 in c.cpus for c in topo.caches)


def test_garbage_hugepage_count_skips_the_pool(root):
    put(root, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages", "?\n")
    topo = discover(root)
    assert 2048 not in topo.node(0).hugepages and 2048 in topo.node(1).hugepages
    assert any("hugepages-2048kB/nr_hugepages" in w for w in topo.warnings)


def test_garbage_core_id_is_a_warning(root):
    put(root, "/sys/devices/system/cpu/cpu1/topology/core_id", "abc\n")
    topo = discover(root)
    assert topo.cpu(1).core_id is None
    assert any("cpu1/topology/core_id" in w for w in topo.warnings)


def test_unreadable_online_file_falls_back_to_cpu_dirs(root):
    if not chmod_unreadable(root, "/sys/devices/system/cpu/online"):
        pytest.skip("running as root: files are always readable")
    assert discover(root).online_cpus == CPUSet(range(8))


def test_unreadable_meminfo_is_a_warning(root):
    if not chmod_unreadable(root, "/sys/devices/system/node/node0/meminfo"):
        pytest.skip("running as root: files are always readable")
    topo = discover(root)
    assert topo.node(0).memory_total == 0 and topo.warnings


def test_missing_root_is_an_error(tmp_path):
    with pytest.raises(PynumaError, match="root"):
        discover(str(tmp_path / "nope"))


def test_a_directory_without_the_cpu_tree_is_not_a_root(tmp_path):
    with pytest.raises(InputError, match=r"not a machine's root \(no sys/devices/system/cpu\)$"):
        discover(str(tmp_path))


def test_the_root_one_level_down_is_named(tmp_path):
    Machine(cores_per_node=2).write(tmp_path / "dump")
    (tmp_path / "notes").mkdir()
    with pytest.raises(InputError, match=f"did you mean --root {tmp_path}/dump"):
        discover(str(tmp_path))
    assert discover(str(tmp_path / "dump")).online_cpus == CPUSet([0, 1])


@pytest.mark.parametrize("command", ["topology", "hugepages", "allocatable"])
def test_commands_refuse_a_folder_that_is_not_a_root(tmp_path, command):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "pynuma", command, "--root", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().endswith(f"{tmp_path}: not a machine's root (no sys/devices/system/cpu)")


def _slit(matrix):
    from pynuma.discover.acpi import build_slit

    return build_slit(matrix)


def _write_slit(root, data: bytes) -> None:
    put(root, "/sys/firmware/acpi/tables/SLIT", "")
    with open(f"{root}/sys/firmware/acpi/tables/SLIT", "wb") as f:
        f.write(data)


def test_valid_slit_is_preferred_and_disagreement_warned(root):
    _write_slit(root, _slit([[10, 32], [32, 10]]))
    topo = discover(root)
    assert topo.distances.source == "slit"
    assert topo.distances.between(0, 1) == 32
    assert any("disagree" in w for w in topo.warnings)


@pytest.mark.parametrize("damage", ["length", "checksum"])
def test_bad_slit_falls_back_to_sysfs_with_warning(root, damage):
    data = bytearray(_slit([[10, 32], [32, 10]]))
    if damage == "length":
        data = data[:-1]
    else:
        data[-1] ^= 0x5A
    _write_slit(root, bytes(data))
    topo = discover(root)
    assert topo.distances.source == "sysfs"
    assert topo.distances.between(0, 1) == 20
    assert any("SLIT" in w for w in topo.warnings)


def test_no_node_dir_and_no_proc(tmp_path):
    root = Machine(packages=1, cores_per_node=2, numa_dir=False).write(tmp_path)
    remove(root, "/proc")
    topo = discover(root)
    assert topo.numa_nodes[0].memory_total == 0 and topo.numa_nodes[0].cpus == CPUSet([0, 1])


def test_unreadable_file_as_directory_even_as_root(root):
    # a directory where a file should be cannot be read (EISDIR), whoever we are
    remove(root, "/sys/devices/system/node/node1/meminfo")
    put(root, "/sys/devices/system/node/node1/meminfo/x", "")
    topo = discover(root)
    assert topo.node(1).memory_total == 0
    assert any("node1/meminfo" in w for w in topo.warnings)
