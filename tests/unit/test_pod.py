"""Pod manifests and the compact vector form."""
import json

import pytest

from pynuma.errors import InputError
from pynuma.pod import Pod, load_pods

MANIFEST = """
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: 1234-abcd
spec:
  priority: 10
  initContainers:
  - name: proxy
    restartPolicy: Always
    resources: {requests: {cpu: 100m}}
  containers:
  - name: app
    resources:
      requests: {cpu: "2", memory: 1Gi}
      limits: {cpu: "2", memory: 1Gi, hugepages-2Mi: 4Mi}
"""


def test_manifest_is_read_with_resources_and_sidecars(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(MANIFEST)
    (pod,) = load_pods(str(path))
    assert (pod.name, pod.namespace, pod.uid, pod.priority) == ("web", "shop", "1234-abcd", 10)
    assert [c.name for c in pod.all_containers()] == ["proxy", "app"]
    assert pod.init_containers[0].is_sidecar
    app = pod.container("app")
    assert app.requests["memory"].value() == 1 << 30
    assert app.limits["hugepages-2Mi"].value() == 4 << 20
    assert app.request("hugepages-2Mi").value() == 4 << 20  # defaults to the limit


def test_compact_form_and_json_list(tmp_path):
    pods = [{"name": "a", "priority": 0, "containers": [{"name": "c", "requests": {"memory": "1Gi"}, "limits": {}}]},
            {"name": "b", "containers": [{"name": "c"}]}]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps(pods))
    loaded = load_pods(str(path))
    assert [p.name for p in loaded] == ["a", "b"]
    assert loaded[0].containers[0].requests["memory"].value() == 1 << 30


@pytest.mark.parametrize("text, fragment", [
    ("kind: Deployment\nmetadata: {name: x}\nspec: {}\n", "is not a Pod"),
    ("kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, resources: {requests: {cpu: 1.5.3}}}]}\n", "1.5.3"),
    ("kind: Pod\nmetadata: {name: x}\nspec: {containers: [{resources: {}}]}\n", "spec.containers[0].name"),
    ("a: [\n", "malformed YAML"),
    ("", "no pod found"),
])
def test_bad_manifests_name_the_file_and_problem(tmp_path, text, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_pods(str(path))
    assert fragment in str(err.value)
    assert "bad.yaml" in str(err.value)


def test_missing_file():
    with pytest.raises(InputError, match="nope.yaml"):
        load_pods("/nonexistent/nope.yaml")


def test_pod_is_immutable():
    pod = Pod.from_dict({"name": "x", "containers": []})
    with pytest.raises(AttributeError):
        pod.name = "y"


@pytest.mark.parametrize("text, path", [
    ("metadata: {name: x}\nspec: {containers: []}\n", "spec.containers: Required value"),
    ("metadata: {name: x}\nspec: {}\n", "spec.containers: Required value"),
    ('[{"name": "x", "containers": []}]', "pod x: containers: Required value"),
    ("metadata: {name: x}\nspec: {initContainers: [{name: i}]}\n", "spec.containers: Required value"),
], ids=["empty-list", "no-key", "compact", "only-init"])
def test_a_pod_without_containers_is_rejected_as_the_api_server_does(tmp_path, text, path):
    f = tmp_path / "pods.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        load_pods(str(f))
    assert str(err.value).startswith(f"{f}: pod x: ") and path in str(err.value)


def _manifest(resources, where="containers"):
    other = "" if where == "containers" else "  containers: [{name: app}]\n"
    return f"metadata: {{name: x}}\nspec:\n{other}  {where}:\n  - name: app\n  - name: c\n    resources: {resources}\n"


@pytest.mark.parametrize("resources, where, path", [
    ("{requests: {cpu: 1.5.3}}", "containers", "spec.containers[1].resources.requests[cpu]: "),
    ("{limits: {memory: lots}}", "initContainers", "spec.initContainers[1].resources.limits[memory]: "),
    ("{requests: {memory: 1Gi, hugepages-2Mi: 2Mi}, limits: {memory: 1Gi, hugepages-2Mi: 4Mi}}", "containers",
     'spec.containers[1].resources.requests[hugepages-2Mi]: Invalid value: "2Mi": must be equal to hugepages-2Mi'),
    ("{requests: {memory: 1Gi, hugepages-2Mi: 3Mi}, limits: {memory: 1Gi, hugepages-2Mi: 3Mi}}", "containers",
     'spec.containers[1].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer'),
    ("{requests: {cpu: 1, example.com/gpu: 1}}", "containers",
     "spec.containers[1].resources.limits[example.com/gpu]: Required value: Limit must be set"),
    ("{limits: {hugepages-2Mi: 2Mi}}", "containers",
     "spec.containers[1].resources: Forbidden: HugePages require cpu or memory"),
], ids=["quantity", "init-quantity", "hugepages-unequal", "hugepages-partial-page", "extended-no-limit",
        "hugepages-alone"])
def test_resource_errors_carry_the_api_servers_full_field_path(tmp_path, resources, where, path):
    f = tmp_path / "pod.yaml"
    f.write_text(_manifest(resources, where))
    with pytest.raises(InputError) as err:
        load_pods(str(f))
    assert str(err.value).startswith(f"{f}: pod x: ") and path in str(err.value)


def test_compact_form_paths_follow_its_own_keys(tmp_path):
    f = tmp_path / "pods.json"
    f.write_text(json.dumps([{"name": "x", "containers": [{"name": "c", "requests": {"cpu": "x1"}}]}]))
    with pytest.raises(InputError, match=r"pod x: containers\[0\]\.requests\[cpu\]: "):
        load_pods(str(f))


@pytest.mark.parametrize("spec, path", [
    ("overhead: {cpu: '-1'}", 'spec.overhead[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    ("resources: {limits: {memory: -1Gi}}",
     'spec.resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("resources: {requests: {cpu: -100m}}",
     'spec.resources.requests[cpu]: Invalid value: "-100m": must be greater than or equal to 0'),
    ("resources: {requests: {cpu: 2}, limits: {cpu: 1}}",
     'spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'),
], ids=["negative-overhead", "negative-pod-limit", "negative-pod-request", "pod-request-above-limit"])
def test_pod_level_resources_and_overhead_are_validated_as_the_api_server_does(tmp_path, spec, path):
    f = tmp_path / "pod.yaml"
    f.write_text(f"metadata: {{name: x}}\nspec:\n  {spec}\n  containers: [{{name: app}}]\n")
    with pytest.raises(InputError) as err:
        load_pods(str(f))
    assert str(err.value) == f"{f}: pod x: {path}"


def test_valid_pod_level_resources_and_overhead_load(tmp_path):
    f = tmp_path / "pod.yaml"
    f.write_text("metadata: {name: x}\nspec:\n  overhead: {cpu: 250m}\n"
                 "  resources: {requests: {cpu: 1}, limits: {cpu: 1, memory: 1Gi}}\n  containers: [{name: app}]\n")
    (pod,) = load_pods(str(f))
    assert str(pod.overhead["cpu"]) == "250m" and str(pod.pod_limits["memory"]) == "1Gi"
