"""AgentConfig: a KubeletConfiguration plus the agent's own settings."""
from __future__ import annotations

import pytest

from pynuma.agent.config import AgentConfig, load_agent_config
from pynuma.errors import InputError


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
