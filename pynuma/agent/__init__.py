"""The node agent: an embeddable runtime that keeps a node's status, Lease and exports current.

>>> from pynuma.agent import NodeAgent, AgentConfig
>>> with NodeAgent(root="/", config=AgentConfig(), state_dir="/tmp/pynuma-agent") as agent:  # doctest: +SKIP
...     agent.sync(); agent.status(); agent.lease()

See :class:`~pynuma.agent.runtime.NodeAgent` for the three ways to run it
(step by step, ``start()``/``stop()`` on a thread, ``await agent.run()``).
"""
from __future__ import annotations

# public name -> module (imported on first use, as the package root does)
_LAZY = {
    "NodeAgent": "pynuma.agent.runtime",
    "SyncResult": "pynuma.agent.sync",
    "AgentConfig": "pynuma.agent.config",
    "load_agent_config": "pynuma.agent.config",
    "NodeStatus": "pynuma.agent.status",
    "NodeCondition": "pynuma.agent.conditions",
    "Lease": "pynuma.agent.lease",
    "LeaseLock": "pynuma.agent.election",
    "DirectorySink": "pynuma.agent.sinks",
    "Sink": "pynuma.agent.sinks",
    "KubernetesSink": "pynuma.agent.kube_sink",
    "PrometheusSink": "pynuma.export.prometheus",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pynuma.agent' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = sorted(_LAZY)
