"""``pynuma agent``: run the node agent in the foreground (status, Lease, eviction cycles, exports).

    pynuma agent [--root DIR] [--config KUBELET_CONFIG] [--state-dir DIR] [--output-dir DIR]
                 [--metrics-port PORT] [--kubeconfig FILE] [--node-name NAME] [--evict] [--once] [--json]

Every ``nodeStatusUpdateFrequency`` the Lease is renewed; eviction cycles
run every 10 s; the status (and the NodeResourceTopology) is published when
it changes and at least every ``nodeStatusReportFrequency``.
``--output-dir`` receives ``lease.json``, ``node-status.json`` and
``noderesourcetopology.json`` (atomic writes); ``--metrics-port`` serves
Prometheus metrics.  ``--once`` does one full pass, prints a summary and
exits.  SIGTERM or Ctrl-C stops the loop cleanly (exit 0).  Evictions are
decisions only unless ``--evict`` asks for the actuator (:mod:`pynuma.apply`):
then the chosen pod's processes are ended through its cgroups (never on a
saved dump).
"""
from __future__ import annotations

import threading
from typing import Optional

from . import _common
from ._streams import stderr, stdout


def _parser():
    p = _common.parser("agent", __doc__.splitlines()[0].split(": ", 1)[1])
    _common.add_root(p)
    p.add_argument("--config", metavar="FILE", help="KubeletConfiguration YAML (managers, reservations, eviction, periods)")
    p.add_argument("--state-dir", metavar="DIR", help="checkpoints and the Lease record (default: none, in memory)")
    p.add_argument("--output-dir", metavar="DIR", help="write lease.json, node-status.json, noderesourcetopology.json")
    p.add_argument("--metrics-port", metavar="PORT", type=int, help="serve Prometheus metrics on this port")
    p.add_argument("--metrics-address", metavar="ADDR", default="0.0.0.0", help="listen address for metrics")
    p.add_argument("--kubeconfig", metavar="FILE", help="also publish to this cluster (needs the kubernetes package)")
    p.add_argument("--node-name", metavar="NAME", help="default: the host name under --root")
    p.add_argument("--evict", action="store_true",
                   help="end the processes of a pod the eviction cycle picks (through its cgroups); "
                        "default: report the decision only")
    p.add_argument("--once", action="store_true", help="one full pass (Lease, eviction cycle, status), then exit")
    _common.add_json(p)
    return p


def _summary(agent, as_json: bool) -> None:
    status, lease, sync = agent.last_status, agent._lease, agent.last_sync
    if as_json:
        _common.print_json({"lease": lease.to_k8s() if lease else None,
                            "node": status.to_node() if status else None,
                            "sync": sync.to_json() if sync else None,
                            "published": dict(agent.publisher.published),
                            "errors": [{"where": w, "message": m} for _, w, m in agent.errors]})
        return
    w = stdout().write
    w(f"node {agent.node_name}: {'leader' if agent.is_leader else 'standby'} "
      f"(lease holder {lease.holder_identity if lease else '-'})\n")
    if status is not None:
        for c in status.conditions:
            w(f"  {c.type:<15} {c.status:<6} {c.reason}\n")
        w("  allocatable: " + ", ".join(f"{k}={v}" for k, v in status.allocatable.items()) + "\n")
    if sync is not None:
        w(f"  eviction cycle: {sync.pods} pods, {sync.containers} containers, "
          f"{sync.duration_s * 1000:.1f} ms, evict {', '.join(e.pod for e in sync.evicted) or 'nothing'}\n")
    w("  published: " + ", ".join(f"{k} x{n}" for k, n in agent.publisher.published.items()) + "\n")


def serve(root: str = "/", config=None, node_name=None, state_dir=None, output_dir=None, metrics_port=None,
          metrics_address: str = "0.0.0.0", once: bool = False, as_json: bool = False,
          kubeconfig: Optional[str] = None, evict: bool = False) -> int:
    """Run an agent in the foreground until stopped (or one pass with ``once``); the exit code."""
    from ..agent.runtime import NodeAgent
    from ..agent.sinks import DirectorySink

    action = None
    if evict:
        from ..apply import evict_action

        action = evict_action(root)  # refuses a fake root: a dump's pods are not this host's processes

    sinks = []
    if output_dir:
        sinks.append(DirectorySink(output_dir))
    if metrics_port is not None:
        from ..export.prometheus import PrometheusSink

        sinks.append(PrometheusSink(metrics_port, metrics_address))
    if kubeconfig:
        from ..agent.kube_sink import KubernetesSink

        sinks.append(KubernetesSink(kubeconfig))
    with NodeAgent(root, config, state_dir, node_name, sinks=sinks, evict=action) as agent:
        if once:
            agent.step()
            _summary(agent, as_json)
            for _, where, message in agent.errors:
                print(f"pynuma agent: warning: {where}: {message}", file=stderr())
            return 1 if agent.errors else 0
        stop = threading.Event()
        restore = _install_stop_handlers(stop)
        try:
            agent.start()
            while not stop.wait(1.0):  # a timed wait lets Ctrl-C through on every Python
                pass
        except KeyboardInterrupt:
            from . import owns_process

            if not owns_process():
                raise  # an embedder's interrupt is the embedder's to handle (the agent stops first)
        finally:
            restore()
            agent.stop()
    return 0


def _install_stop_handlers(stop: threading.Event):
    """SIGTERM / SIGINT set ``stop`` -- only when the launcher owns the process; returns the undo."""
    from . import owns_process

    if not owns_process() or threading.current_thread() is not threading.main_thread():
        return lambda: None
    from ..__main__ import handle_stop_signals

    return handle_stop_signals(stop.set)


def main(argv) -> int:
    args = _parser().parse_args(argv)
    from ..errors import InputError

    if args.metrics_port is not None and not 0 <= args.metrics_port < 65536:
        raise InputError(f"--metrics-port: must be 0-65535, got {args.metrics_port}")
    return serve(args.root, args.config, args.node_name, args.state_dir, args.output_dir, args.metrics_port,
                 args.metrics_address, args.once, args.json, args.kubeconfig, args.evict)
