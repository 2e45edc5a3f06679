"""KubeletConfiguration reading: eviction maps, durations, reservations, errors naming the file."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.config.kubelet import load_kubelet_config, parse_kubelet_config


def test_fields_and_defaults(tmp_path):
    f = tmp_path / "config.yaml"
    f.write_text("""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard: {memory.available: 500Mi, nodefs.available: "5%"}
evictionSoft: {memory.available: 1Gi}
evictionSoftGracePeriod: {memory.available: 90s}
evictionMinimumReclaim: {memory.available: 100Mi}
evictionPressureTransitionPeriod: 1m
evictionMaxPodGracePeriod: 20
kubeReserved: {cpu: 500m, memory: 1Gi}
featureGates: {KubeletSeparateDiskGC: false}
""")
    c = load_kubelet_config(str(f))
    ts = c.thresholds()
    assert {(t.signal, t.is_hard) for t in ts} == {("memory.available", True), ("nodefs.available", True),
                                                   ("memory.available", False), ("allocatableMemory.available", True)}
    assert all(t.min_reclaim is not None for t in ts if t.signal.endswith("emory.available"))
    assert c.eviction_pressure_transition_period_s == 60 and c.eviction_max_pod_grace_period_s == 20
    assert str(c.reserved("kube")["cpu"]) == "500m" and c.reserved("system") == {}
    assert c.feature_gates == {"KubeletSeparateDiskGC": False}
    assert len(c.hard_thresholds()) == 2


def test_absent_maps_take_kubelet_defaults():
    c = parse_kubelet_config({})
    assert c.eviction_hard is None and len(c.hard_thresholds()) == 5 and c.enforce_node_allocatable == ["pods"]


@pytest.mark.parametrize("doc,match", [
    ({"kind": "Pod"}, "is not KubeletConfiguration"),
    ({"evictionHard": ["x"]}, "evictionHard must be a map"),
    ({"evictionPressureTransitionPeriod": "soon"}, "evictionPressureTransitionPeriod"),
    ({"evictionMaxPodGracePeriod": "30"}, "must be an integer"),
])
def test_bad_documents(doc, match):
    with pytest.raises(InputError, match=match):
        parse_kubelet_config(doc, "cfg.yaml")


def test_errors_name_the_file(tmp_path):
    f = tmp_path / "k.yaml"
    f.write_text("evictionSoft: {memory.available: 1Gi}\n")
    with pytest.raises(InputError, match=r"k\.yaml: evictionSoft\[memory.available\]: no grace period"):
        load_kubelet_config(str(f)).thresholds()
    f.write_text("a: [\n")
    with pytest.raises(InputError, match="malformed YAML"):
        load_kubelet_config(str(f))
    with pytest.raises(InputError, match="missing.yaml"):
        load_kubelet_config(str(tmp_path / "missing.yaml"))
