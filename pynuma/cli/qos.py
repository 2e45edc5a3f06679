"""``pynuma qos POD.yaml``: QoS class and per-container OOM score adjustment, as the kubelet computes them."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import List


def _capacity(args) -> int:
    from ..errors import InputError
    from ..quantity import Quantity

    if args.memory_capacity is not None:
        try:
            q = Quantity.parse(args.memory_capacity)
        except InputError as err:
            raise InputError(f"--memory-capacity: {err}") from None
        if q.value() <= 0:
            raise InputError(f"--memory-capacity: must be positive, got {args.memory_capacity}")
        return q.value()
    from ..meminfo import MEMINFO, mem_total
    from ..errors import PynumaError
    from ..fsroot import FsRoot

    with FsRoot(args.root) as fs:
        total = mem_total(fs)
        if total is None:
            raise PynumaError(f"{fs.host_path(MEMINFO)}: no MemTotal; give --memory-capacity")
        return total


def _kind(c, init_ids) -> str:
    if id(c) in init_ids:
        return "sidecar" if c.is_sidecar else "init"
    return "regular"


def main(argv: List[str]) -> int:
    from ._common import add_json, add_root, parser, print_json

    p = parser("qos", "QoS class of each pod and the oom_score_adj the kubelet gives each container.")
    p.add_argument("pods", metavar="POD.yaml", help="pod manifest(s): YAML or JSON, one pod, several, or a List")
    p.add_argument("--memory-capacity", metavar="Q",
                   help="node memory capacity (e.g. 64Gi); default: MemTotal of /proc/meminfo under --root")
    p.add_argument("--no-pod-level-resources", action="store_true",
                   help="turn the PodLevelResources feature gate off (on by default, as in current kubelets)")
    p.add_argument("--legacy-critical", action="store_true",
                   help="older kubelets: every critical pod (not only system-node-critical) gets -997")
    add_root(p)
    add_json(p)
    args = p.parse_args(argv)

    from ..pod import load_pods
    from ..policy.oom_score import oom_score_adjs
    from ..policy.qos import qos_class

    pods = load_pods(args.pods, defaulted=True)  # as the kubelet sees them
    capacity = _capacity(args)
    plr = not args.no_pod_level_resources
    out = []
    for pod in pods:
        conts = []
        adjs = oom_score_adjs(pod, capacity, pod_level_resources=plr, legacy_critical=args.legacy_critical)
        init_ids = {id(c) for c in pod.init_containers}
        for c, adj in zip(pod.all_containers(), adjs):
            req = c.request("memory")
            conts.append({"name": c.name, "kind": _kind(c, init_ids),
                          "memory_request": str(req) if req is not None else None, "oom_score_adj": adj})
        out.append({"pod": pod.name, "namespace": pod.namespace, "qos": qos_class(pod, plr), "containers": conts})
    if args.json:
        print_json({"memory_capacity": capacity, "pods": out})
        return 0
    from ._units import human_bytes

    print(f"memory capacity: {human_bytes(capacity)}")
    for pod, entry in zip(pods, out):
        print(f"pod {entry['namespace']}/{entry['pod']}: {entry['qos']}")
        width = max((len(c["name"]) for c in entry["containers"]), default=4)
        for c, container in zip(entry["containers"], pod.all_containers()):
            req = container.request("memory")
            shown = "-" if req is None else human_bytes(req.value())
            print(f"  {c['name']:<{width}}  {c['kind']:<7}  memory request {shown:<10}  "
                  f"oom_score_adj {c['oom_score_adj']}")
    return 0
