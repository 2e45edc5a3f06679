"""AgentConfig: the kubelet's fields and defaults, the agent's own, and a KubeletConfiguration file."""
from __future__ import annotations

import pytest

from pynuma.agent.config import AgentConfig, as_agent_config, load_agent_config
from pynuma.config.kubelet import KubeletConfig
from pynuma.errors import InputError


def test_defaults_are_the_kubelets():
    cfg = AgentConfig()
    assert (cfg.node_status_update_frequency_s, cfg.node_status_report_frequency_s, cfg.node_lease_duration_s) == \
        (10.0, 60.0, 40)
    assert (cfg.cpu_manager_policy, cfg.topology_manager_policy, cfg.memory_manager_policy) == ("none", "none", "None")
    assert cfg.max_pods == 110 and cfg.sync_frequency_s == 10.0


def test_a_kubelet_configuration_file(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text("""kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0,4"
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
topologyManagerPolicyOptions: {prefer-closest-numa-nodes: "true"}
memoryManagerPolicy: Static
reservedMemory:
- numaNode: 0
  limits: {memory: 1Gi}
nodeStatusUpdateFrequency: 5s
nodeStatusReportFrequency: 2m
nodeLeaseDurationSeconds: 20
maxPods: 50
evictionHard: {memory.available: 200Mi}
""")
    cfg = load_agent_config(str(path), kubelet_root="/data/kubelet")
    assert (cfg.cpu_manager_policy, cfg.reserved_system_cpus) == ("static", "0,4")
    assert (cfg.topology_manager_policy, cfg.topology_manager_scope) == ("single-numa-node", "pod")
    assert cfg.topology_manager_policy_options == {"prefer-closest-numa-nodes": "true"}
    assert cfg.memory_manager_policy == "Static" and cfg.reserved_memory[0].numa_node == 0
    assert str(cfg.reserved_memory[0].limits["memory"]) == "1Gi"
    assert (cfg.node_status_update_frequency_s, cfg.node_status_report_frequency_s) == (5.0, 120.0)
    assert (cfg.node_lease_duration_s, cfg.max_pods, cfg.kubelet_root) == (20, 50, "/data/kubelet")
    assert [str(t) for t in cfg.hard_thresholds()] == ["memory.available<200Mi"]
    assert as_agent_config(str(path)) == load_agent_config(str(path))


@pytest.mark.parametrize("text, needle", [
    ("nodeStatusUpdateFrequency: 0s", "nodeStatusUpdateFrequency must be positive"),
    ("nodeLeaseDurationSeconds: -1", "nodeLeaseDurationSeconds"),
    ("reservedMemory: {numaNode: 0}", "reservedMemory must be a list"),
    ("cpuManagerPolicy: 3", "cpuManagerPolicy must be a string"),
])
def test_bad_fields_name_the_file_and_field(tmp_path, text, needle):
    path = tmp_path / "kubelet.yaml"
    path.write_text("kind: KubeletConfiguration\n" + text + "\n")
    with pytest.raises(InputError) as err:
        load_agent_config(str(path))
    assert str(path) in str(err.value) and needle in str(err.value)


def test_accepted_forms_and_overrides():
    assert as_agent_config(None) == AgentConfig()
    assert as_agent_config(KubeletConfig(max_pods=9)).max_pods == 9
    assert AgentConfig().replace(sync_frequency_s=2.5).sync_frequency_s == 2.5
    with pytest.raises(InputError):
        as_agent_config(42)
    with pytest.raises(InputError):
        AgentConfig(node_status_report_frequency_s=float("nan"))


def test_a_kubelet_configuration_file_keeps_every_kubelet_field(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                    "cpuManagerPolicy: static\ntopologyManagerPolicy: single-numa-node\n"
                    "nodeStatusUpdateFrequency: 4s\nevictionHard: {memory.available: 300Mi}\n"
                    "kubeReserved: {cpu: 500m}\n")
    cfg = load_agent_config(str(path), sync_frequency_s=2)
    assert (cfg.cpu_manager_policy, cfg.topology_manager_policy) == ("static", "single-numa-node")
    assert cfg.node_status_update_frequency_s == 4 and cfg.sync_frequency_s == 2
    assert cfg.eviction_hard == {"memory.available": "300Mi"} and cfg.kube_reserved == {"cpu": "500m"}
    assert cfg.replace(sync_frequency_s=5).cpu_manager_policy == "static"


@pytest.mark.parametrize("name", ["node_status_update_frequency_s", "sync_frequency_s"])
def test_periods_must_be_positive(name):
    with pytest.raises(InputError, match=name):
        AgentConfig(**{name: 0})
