"""Input files that parse but hold what no such file holds: a lone surrogate escape, a field of the
wrong type.  Each is one error line naming the file (exit 2), never a traceback."""
from __future__ import annotations

import json
import os

import pytest

from pynuma import cli
from pynuma._jsonsubset import loads_as_go

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"},
       "spec": {"containers": [{"name": "c"}]}}


def _one_line(capsys, needle: str) -> None:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and needle in err, err


def _pod(**changes):
    doc = json.loads(json.dumps(POD))
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = doc
        for key in parents:
            node = node[key]
        node[last] = value
    return doc


@pytest.mark.parametrize("text", [
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w\\ud800b","uid":"u"},"spec":{"containers":[{"name":"c"}]}}',
    'metadata: {name: "w\\udc00b", uid: u}\nspec: {containers: [{name: c}]}\n',
    '{"metadata":{"name":"p","uid":"u","annotations":{"\\ud800":"x"}},"spec":{"containers":[{"name":"c"}]}}',
], ids=["json value", "yaml value", "json key"])
def test_a_lone_surrogate_is_refused_naming_the_file(tmp_path, capsys, text):
    path = tmp_path / "pod.json"
    path.write_text(text)
    assert cli.main(["qos", str(path), "--memory-capacity", "1Gi"]) == 2
    _one_line(capsys, f"{path}: the string ")


def test_a_surrogate_pair_is_one_character(tmp_path, capsys):
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(_pod(metadata__name="ok\U0001F600"), ensure_ascii=True))
    assert cli.main(["qos", str(path), "--memory-capacity", "1Gi"]) == 0
    assert "ok\U0001F600" in capsys.readouterr().out


def test_checkpoints_decode_a_lone_surrogate_as_go_does():
    assert loads_as_go('{"a": "x\\ud800y", "b": ["\\udc00"], "c": "\\ud83d\\ude00"}') == \
        {"a": "x\ufffdy", "b": ["\ufffd"], "c": "\U0001F600"}


@pytest.mark.parametrize("changes,needle", [
    ({"metadata__annotations": 5}, "annotations: expected a map of strings"),
    ({"metadata__uid": [1]}, "metadata.uid: expected a string, got list"),
    ({"metadata__uid": True}, "metadata.uid: expected a string, got bool"),
    ({"metadata__namespace": {"a": 1}}, "metadata.namespace: expected a string"),
    ({"status": {"qosClass": [1]}}, "status.qosClass: expected a string"),
    ({"spec__resources": [1]}, "resources: expected a map"),
    ({"spec__volumes": "x"}, "volumes must be a list"),
    ({"spec__volumes": [5]}, "spec.volumes[0]: expected a map"),
    ({"spec__volumes": [{"name": "v", "emptyDir": {"sizeLimit": "x"}}]}, "spec.volumes[0].emptyDir.sizeLimit: "),
    ({"spec__nodeName": 5}, "nodeName: expected a string"),
    ({"spec__containers": [{"name": "c", "resources": [1]}]}, "containers[0].resources: expected a map"),
    ({"spec__initContainers": [{"name": "i", "restartPolicy": [1]}]}, "restartPolicy: expected a string"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_pod_field_of_the_wrong_type_is_refused(tmp_path, capsys, changes, needle):
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(_pod(**changes)))
    assert cli.main(["qos", str(path), "--memory-capacity", "1Gi"]) == 2
    _one_line(capsys, needle)


def test_an_unquoted_numeric_uid_is_its_digits(tmp_path, capsys):
    path = tmp_path / "pod.yaml"
    path.write_text("metadata: {name: p, uid: 1234}\nspec: {containers: [{name: c}]}\n")
    from pynuma.pod import load_pods

    assert [p.uid for p in load_pods(str(path))] == ["1234"]


@pytest.mark.parametrize("summary,needle", [
    ({"node": {"memory": {"availableBytes": 1}}, "pods": 5}, "pods: expected a list"),
    ({"pods": [{"podRef": "x"}]}, "pods[0].podRef: expected a map"),
    ({"pods": [{"podRef": {"uid": [1]}}]}, "pods[0].podRef.uid: expected a string"),
    ({"pods": [{"podRef": {"uid": "u"}, "containers": "x"}]}, "pods[0].containers: expected a list"),
])
def test_a_stats_summary_field_of_the_wrong_type_is_refused(tmp_path, capsys, summary, needle):
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(summary))
    assert cli.main(["eviction", "--stats", str(path)]) == 2
    _one_line(capsys, f"{path}: {needle}")


@pytest.mark.parametrize("argv,needle", [
    (["run", "--dry-run", "--", ""], "the command is an empty string"),
    (["bench", "memory", "--size", "1M", "--duration", "1e308"], "--duration 1e+308: must be > 0 and at most"),
    (["fit", "--max-pods", str(1 << 64), "{pod}"], "--max-pods: must be between 0 and 2147483647"),
])
def test_arguments_out_of_range(tmp_path, capsys, argv, needle):
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(POD))
    assert cli.main([a.format(pod=pod) for a in argv]) == 2
    _one_line(capsys, needle)


def test_an_output_directory_that_takes_no_files_is_one_error(tmp_path, capsys):
    from tests.agent.conftest import write_node

    root = write_node(tmp_path / "node")
    assert cli.main(["agent", "--once", "--root", root, "--output-dir", "/proc"]) == 1
    _one_line(capsys, "output directory /proc: cannot write there")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_an_unreadable_input_file_is_an_operational_failure(tmp_path):
    import subprocess
    import sys

    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(POD))
    pod.chmod(0)
    os.chmod(tmp_path, 0o755)
    project = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "pynuma",
                        "qos", str(pod), "--memory-capacity", "1Gi"], capture_output=True, text=True, timeout=60,
                       cwd=project, env={**os.environ, "PYTHONPATH": project})
    if "Permission denied" not in r.stderr or "pynuma qos" not in r.stderr:
        pytest.skip(f"cannot run pynuma as another user here: {r.stderr.strip()[-200:]}")
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr


def test_a_malformed_json_file_gets_json_words(tmp_path, capsys):
    path = tmp_path / "pod.json"
    path.write_text('{"metadata": {"name": "p"}, "spec": {')
    assert cli.main(["qos", str(path), "--memory-capacity", "1Gi"]) == 2
    _one_line(capsys, f"{path}: not JSON: ")


def test_migrate_with_an_empty_node_list_is_refused(capsys):
    import subprocess

    child = subprocess.Popen(["sleep", "30"])
    try:
        assert cli.main(["bind", str(child.pid), "--dry-run", "--migrate", "", "0"]) == 2
        _one_line(capsys, "both node lists must name a node")
    finally:
        child.kill()
        child.wait()
