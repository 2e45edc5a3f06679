"""``AgentConfig``: what a :class:`~pynuma.agent.NodeAgent` runs with.

It is a :class:`~pynuma.config.kubelet.KubeletConfig` (the kubelet's own
field names and defaults: managers, reservations, eviction, node status and
lease periods) plus the few settings that only an agent has::

    cfg = AgentConfig(cpu_manager_policy="static", node_status_update_frequency_s=2)
    cfg = load_agent_config("/var/lib/kubelet/config.yaml", kubelet_root="/data/kubelet")
"""
from __future__ import annotations

from .._dataclass import dataclass, fields, replace
from typing import Any, Optional, Union

from ..config.kubelet import KubeletConfig, load_kubelet_config
from ..errors import InputError

# pkg/kubelet/eviction: the eviction manager's monitoring period (evictionMonitoringPeriod, 10s)
DEFAULT_SYNC_FREQUENCY_S = 10.0


@dataclass(frozen=True)
class AgentConfig(KubeletConfig):
    """KubeletConfiguration fields plus the agent's own: where nodefs/imagefs live and the eviction period."""

    kubelet_root: str = "/var/lib/kubelet"
    image_dir: Optional[str] = None
    sync_frequency_s: float = DEFAULT_SYNC_FREQUENCY_S

    def __post_init__(self) -> None:
        for name in ("node_status_update_frequency_s", "node_status_report_frequency_s", "sync_frequency_s"):
            value = getattr(self, name)
            if not value > 0:  # written so nan fails too
                raise InputError(f"agent config: {name} must be positive, got {value!r}")
        if self.node_lease_duration_s <= 0:
            raise InputError(f"agent config: node_lease_duration_s must be positive, got {self.node_lease_duration_s}")

    @classmethod
    def from_kubelet(cls, kubelet: KubeletConfig, **overrides: Any) -> "AgentConfig":
        """The agent configuration of a kubelet configuration, with ``overrides`` applied."""
        values = {f.name: getattr(kubelet, f.name) for f in fields(KubeletConfig)}
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes: Any) -> "AgentConfig":
        """A copy with ``changes``."""
        return replace(self, **changes)


def load_agent_config(path: str, **overrides: Any) -> AgentConfig:
    """Read a KubeletConfiguration YAML/JSON file into an :class:`AgentConfig`; ``InputError`` naming it."""
    return AgentConfig.from_kubelet(load_kubelet_config(path), **overrides)


def as_agent_config(config: Union[AgentConfig, KubeletConfig, str, None]) -> AgentConfig:
    """Accept what ``NodeAgent(config=...)`` accepts: an AgentConfig, a KubeletConfig, a file path or None."""
    if config is None:
        return AgentConfig()
    if isinstance(config, AgentConfig):
        return config
    if isinstance(config, KubeletConfig):
        return AgentConfig.from_kubelet(config)
    if isinstance(config, str):
        return load_agent_config(config)
    raise InputError(f"agent config: expected an AgentConfig, a KubeletConfig or a file path, "
                     f"got {type(config).__name__}")
