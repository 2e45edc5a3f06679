"""``KubernetesSink``: publish to a cluster through the official ``kubernetes`` client (optional extra).

>>> sink = KubernetesSink("~/.kube/config")          # doctest: +SKIP
>>> NodeAgent(sinks=[sink]).start()                  # doctest: +SKIP

* Lease: ``coordination.k8s.io/v1`` in ``kube-node-lease``, replaced (created the first time);
* Node: the status is patched onto the Node (registered first when the cluster has none, as the
  kubelet registers itself);
* NodeResourceTopology: the cluster-scoped custom object ``noderesourcetopologies`` of
  ``topology.node.k8s.io/v1alpha2``, replaced at its current resourceVersion or created.

Bodies are the very objects the directory sink writes; with ``validate=True`` each is checked
against the same schemas before it is sent (an invalid body raises, the agent records it).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ..errors import InputError, Unsupported

NRT_GROUP, NRT_VERSION, NRT_PLURAL = "topology.node.k8s.io", "v1alpha2", "noderesourcetopologies"


def _client():
    try:
        import kubernetes
    except ImportError:
        raise Unsupported("the Kubernetes sink needs the kubernetes package (pip install 'pynuma[kubernetes]')") \
            from None
    return kubernetes


class KubernetesSink:
    """Sends the agent's Lease, Node status and NodeResourceTopology to the API server of ``kubeconfig``."""

    def __init__(self, kubeconfig: Optional[str] = None, context: Optional[str] = None, validate: bool = True,
                 crd_path: Optional[str] = None) -> None:
        k8s = _client()
        try:
            self.api = k8s.config.new_client_from_config(config_file=kubeconfig, context=context)
        except (k8s.config.ConfigException, OSError) as err:
            raise InputError(f"kubeconfig {kubeconfig or '(default)'}: {err}") from None
        self._k8s = k8s
        self.coordination = k8s.client.CoordinationV1Api(self.api)
        self.core = k8s.client.CoreV1Api(self.api)
        self.custom = k8s.client.CustomObjectsApi(self.api)
        self.validate = validate
        self._nrt_schema = None
        if validate and crd_path:
            from ..export.validate import nrt_schema

            self._nrt_schema = nrt_schema(crd_path)

    def _missing(self, err: Exception) -> bool:
        return isinstance(err, self._k8s.client.ApiException) and err.status == 404

    def _check(self, obj: Mapping[str, Any]) -> None:
        if not self.validate:
            return
        from ..export.validate import k8s_errors, nrt_errors

        errors = nrt_errors(obj, self._nrt_schema) if obj.get("kind") == "NodeResourceTopology" and \
            self._nrt_schema is not None else ([] if obj.get("kind") == "NodeResourceTopology" else k8s_errors(obj))
        if errors:
            raise InputError(f"{obj.get('kind')} {obj.get('metadata', {}).get('name')}: {errors[0]}")

    def publish_lease(self, lease: Mapping[str, Any]) -> None:
        self._check(lease)
        meta = lease["metadata"]
        try:
            self.coordination.replace_namespaced_lease(meta["name"], meta["namespace"], dict(lease))
        except Exception as err:
            if not self._missing(err):
                raise
            self.coordination.create_namespaced_lease(meta["namespace"], dict(lease))

    def publish_status(self, node: Mapping[str, Any]) -> None:
        self._check(node)
        name = node["metadata"]["name"]
        try:
            self.core.patch_node_status(name, {"status": node["status"]})
        except Exception as err:
            if not self._missing(err):
                raise
            self.core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": dict(node["metadata"])})
            self.core.patch_node_status(name, {"status": node["status"]})

    def publish_topology(self, nrt: Mapping[str, Any]) -> None:
        self._check(nrt)
        name = nrt["metadata"]["name"]
        body = dict(nrt)
        try:
            current = self.custom.get_cluster_custom_object(NRT_GROUP, NRT_VERSION, NRT_PLURAL, name)
        except Exception as err:
            if not self._missing(err):
                raise
            self.custom.create_cluster_custom_object(NRT_GROUP, NRT_VERSION, NRT_PLURAL, body)
            return
        # a custom object is replaced at the version read (the API refuses an update without one)
        body["metadata"] = dict(body["metadata"], resourceVersion=current["metadata"]["resourceVersion"])
        self.custom.replace_cluster_custom_object(NRT_GROUP, NRT_VERSION, NRT_PLURAL, name, body)

    def close(self) -> None:
        self.api.close()

    def __repr__(self) -> str:
        return f"KubernetesSink({self.api.configuration.host})"
