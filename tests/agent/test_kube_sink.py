"""The Kubernetes API sink against a fake API server on loopback: paths, verbs, and bodies that validate."""
from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conformance.vectors import conformance_dir

pytest.importorskip("kubernetes")

from pynuma.agent import AgentConfig, NodeAgent  # noqa: E402
from pynuma.agent.kube_sink import KubernetesSink  # noqa: E402

# shared/ecosystem sits beside shared/conformance ($PYNUMA_CONFORMANCE_DIR)
CRD = str(conformance_dir().parent / "ecosystem" / "noderesourcetopology-crd.yaml")


class FakeAPI(BaseHTTPRequestHandler):
    """Keeps objects by path; answers 404 for what it does not hold, as the API server does."""

    store: dict = {}
    log: list = []

    def log_message(self, *args):
        pass

    def _reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")

    def _not_found(self):
        self._reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})

    def do_GET(self):
        self.log.append(("GET", self.path, None))
        obj = self.store.get(self.path)
        self._reply(200, obj) if obj is not None else self._not_found()

    def do_PUT(self):
        body = self._body()
        self.log.append(("PUT", self.path, json.loads(json.dumps(body))))
        if self.path not in self.store:
            return self._not_found()
        body["metadata"]["resourceVersion"] = str(int(self.store[self.path]["metadata"]["resourceVersion"]) + 1)
        self.store[self.path] = body
        self._reply(200, body)

    def do_POST(self):
        body = self._body()
        self.log.append(("POST", self.path, body))
        body.setdefault("metadata", {})["resourceVersion"] = "1"
        self.store[f"{self.path}/{body['metadata']['name']}"] = body
        self._reply(201, body)

    def do_PATCH(self):
        body = self._body()
        self.log.append(("PATCH", self.path, body))
        node = self.store.get(self.path.rsplit("/status", 1)[0])
        if node is None:
            return self._not_found()
        node["status"] = body["status"]
        self._reply(200, node)


@pytest.fixture
def api(tmp_path):
    FakeAPI.store, FakeAPI.log = {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeAPI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: "http://127.0.0.1:{server.server_address[1]}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: c, context: {{cluster: fake, user: u}}}}]
current-context: c
""")
    yield str(kubeconfig)
    server.shutdown()
    server.server_close()
    thread.join()


def test_objects_reach_the_api_with_the_right_verbs_and_valid_bodies(api, node_root):
    pytest.importorskip("kubernetes_validate")
    from pynuma.export.validate import k8s_errors, nrt_errors, nrt_schema

    crd = CRD if os.path.isfile(CRD) else None
    sink = KubernetesSink(api, crd_path=crd)
    cfg = AgentConfig(node_status_update_frequency_s=10)
    with NodeAgent(node_root, cfg, sinks=[sink]) as agent:
        agent.step(now=1000.0)
        agent.step(now=1010.0)   # Lease renewed: replaced this time
        agent.admit({"metadata": {"name": "p", "uid": "p"}, "spec": {"containers": [{"name": "c"}]}})
        agent.publisher.topology(1011.0, force=True)  # the NRT again: replaced at its resourceVersion
    calls = [(verb, path) for verb, path, _ in FakeAPI.log]
    lease = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    nrt = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"
    assert calls[:2] == [("PUT", f"{lease}/worker-7"), ("POST", lease)]
    assert ("PATCH", "/api/v1/nodes/worker-7/status") in calls and ("POST", "/api/v1/nodes") in calls
    assert ("POST", nrt) in calls and ("PUT", f"{lease}/worker-7") in calls[2:]
    assert calls[-2:] == [("GET", f"{nrt}/worker-7"), ("PUT", f"{nrt}/worker-7")]
    assert FakeAPI.log[-1][2]["metadata"]["resourceVersion"] == "1"
    stored_lease = FakeAPI.store[f"{lease}/worker-7"]
    assert stored_lease["spec"]["renewTime"].startswith("1970-01-01T00:16:50")
    assert k8s_errors({k: v for k, v in stored_lease.items() if k != "metadata"} | {
        "metadata": {"name": "worker-7", "namespace": "kube-node-lease"}}) == []
    node = FakeAPI.store["/api/v1/nodes/worker-7"]
    assert node["status"]["nodeInfo"]["bootID"] and node["status"]["conditions"][-1]["type"] == "Ready"
    if crd:
        body = dict(FakeAPI.store[f"{nrt}/worker-7"])
        assert nrt_errors(body, nrt_schema(crd)) == []


def test_an_invalid_body_is_refused_before_sending(api):
    sink = KubernetesSink(api)
    pytest.importorskip("kubernetes_validate")
    from pynuma.errors import InputError

    with pytest.raises(InputError, match="Lease"):
        sink.publish_lease({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                            "metadata": {"name": "n", "namespace": "kube-node-lease"},
                            "spec": {"leaseDurationSeconds": "forty"}})
    assert FakeAPI.log == []


def test_a_bad_kubeconfig_is_one_clear_error(tmp_path):
    from pynuma.errors import InputError

    bad = tmp_path / "kubeconfig"
    bad.write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(InputError, match=str(bad)):
        KubernetesSink(str(bad))
