"""Arguments no parser expects are one error line (exit 2), never a traceback."""
from __future__ import annotations

import pytest

from pynuma import cli
from tests.fixtures.sysfs_builder import Machine

HUGE = "9" * 5000  # more digits than int() converts


@pytest.fixture
def root(tmp_path):
    return str(Machine(packages=1, nodes_per_package=1, cores_per_node=2, threads=1).write(tmp_path / "root"))


@pytest.mark.parametrize("argv", [
    ["hugepages", "set", f"2Mi={HUGE}", "--dry-run", "--root", "{root}"],
    ["oom-adjust", "--dry-run", HUGE, "0"],
    ["oom-adjust", "--dry-run", "4194305", "0"],
    ["apply", "{pod}", "--root", "{root}", "--target-root", "--dry-run", "--cpu-cfs-quota-period", f"{HUGE}ms"],
    ["apply", "{pod}", "--root", "{root}", "--target-root", "--dry-run", "--pid", "c=-1"],
    ["apply", "{pod}", "--root", "{root}", "--target-root", "--dry-run", "--pid", f"c={HUGE}"],
], ids=["hugepage count", "pid", "pid above the limit", "cfs period", "apply pid negative", "apply pid huge"])
def test_numbers_too_long_to_convert(argv, root, tmp_path, capsys):
    pod = tmp_path / "pod.json"
    pod.write_text('{"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [{"name": "c"}]}}')
    argv = [a.format(root=root, pod=pod) for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 300, err


@pytest.mark.parametrize("argv", [
    ["export", "nrt", "--root", "{root}", "--node-name", "a" * 40 + "!"],
    ["export", "nrt", "--root", "{root}", "--node-name", "Worker_1"],
    ["export", "nrt", "--root", "{hostile_host}"],
    ["agent", "--once", "--json", "--root", "{root}", "--node-name", "Worker_1"],
    ["export", "nrt", "--root", "{root}", "--policy", "bogus"],
    ["export", "nrt", "--root", "{root}", "--scope", "bogus"],
    ["export", "prometheus", "--port", "59399", "--address", "a..b"],
], ids=["node name that would feed a CRD pattern", "node name", "host name", "agent node name", "policy", "scope",
        "metrics address"])
def test_export_values_are_checked(argv, root, tmp_path, capsys):
    from pathlib import Path

    hostile_host = Path(Machine(packages=1, nodes_per_package=1, cores_per_node=2, threads=1).write(tmp_path / "host"))
    (hostile_host / "proc/sys/kernel").mkdir(parents=True, exist_ok=True)
    (hostile_host / "proc/sys/kernel/hostname").write_text('we"ird\\host\n')
    assert cli.main([a.format(root=root, hostile_host=hostile_host) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"metadata": {"properties": {"name": {"pattern": "([a-"}}}}},
    {"definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}}, "$ref": "#/definitions/a"},
    {"$ref": "#/definitions/nowhere"},
], ids=["bad regular expression", "reference loop", "reference to nothing"])
def test_a_crd_whose_schema_cannot_be_used_is_one_error_naming_it(schema, root, tmp_path, capsys):
    pytest.importorskip("jsonschema")
    import json

    crd = tmp_path / "crd.json"
    crd.write_text(json.dumps({"spec": {"versions": [{"name": "v1alpha2", "schema": {"openAPIV3Schema": schema}}]}}))
    assert cli.main(["export", "nrt", "--root", root, "--node-name", "worker-1", "--crd", str(crd)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"pynuma export nrt: error: {crd}: not a usable schema") and err.count("\n") == 1, err


def test_bench_size_above_the_machines_memory_names_the_argument(capsys):
    assert cli.main(["bench", "memory", "--size", "64T", "--duration", "0.01"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--size 64T: more than this machine's" in err


def test_bench_threads_are_bounded_by_the_online_cpus(capsys):
    assert cli.main(["bench", "memory", "--threads", "100000", "--duration", "0.01", "--size", "1M"]) == 2
    assert "--threads 100000: at most the" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["admit", "{pod}", "--root", ""], ["export", "nrt", "--root", ""], ["eviction", "--root", ""],
    ["qos", ""], ["state", "show", ""], ["admit", "{pod}", "--topology", ""], ["eviction", "--pods", ""],
], ids=["admit root", "export root", "eviction root", "qos manifest", "state file", "topology file", "pods file"])
def test_an_empty_path_is_refused_not_read_as_the_host_or_the_cwd(argv, tmp_path, capsys):
    pod = tmp_path / "pod.json"
    pod.write_text('{"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [{"name": "c"}]}}')
    assert cli.main([a.format(pod=pod) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "an empty path names no file or directory" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("argv,needle", [
    (["eviction", "--root", "{root}", "--enforce-node-allocatable", "bogus"], "invalid option 'bogus'"),
    (["eviction", "--root", "{root}", "--enforce-node-allocatable", "none,pods"], "'none' cannot be combined"),
    (["procs", "--user", "no-such-user-of-pynuma"], "no user named"),
], ids=["enforce value", "enforce none with others", "unknown user"])
def test_values_the_kubelet_or_pgrep_refuse(argv, needle, root, capsys):
    assert cli.main([a.format(root=root) for a in argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_a_kubelet_config_with_a_bad_hard_threshold_is_named_by_the_agent(root, tmp_path, capsys):
    config = tmp_path / "kubelet.yaml"
    config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                      "evictionHard: {memory.available: 1e9999999}\n")
    assert cli.main(["agent", "--once", "--root", root, "--config", str(config)]) == 2
    assert capsys.readouterr().err.startswith(f"pynuma agent: error: {config}: evictionHard[memory.available]: ")
