"""A corpus of bad command lines: every command, every kind of file and flag value.

``make_inputs(dir)`` writes the files the cases refer to (``{NAME}`` in an
argument is replaced by its path); ``CASES`` lists ``(id, argv)``.  Every case
is bad input or an operation that must fail: it must exit 1 or 2 with one
line on stderr and no traceback (``tests/hostile/test_cli_corpus.py``).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Dict, List, Tuple

from ._limits import cap_address_space

GOOD_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "uid": "uid-web", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                                                                  "limits": {"cpu": "2", "memory": "1Gi"}}}]}}


def _pod_with(**resources) -> str:
    pod = json.loads(json.dumps(GOOD_POD))
    res = pod["spec"]["containers"][0]["resources"]
    for k, v in resources.items():
        res["requests"][k] = v
        res["limits"][k] = v
    return json.dumps(pod)


def _cpus(nodes: int = 2, per_node: int = 4) -> list:
    return [{"id": n * per_node + i, "package": n, "node": n, "core": n * per_node + i}
            for n in range(nodes) for i in range(per_node)]


#: bad contents every file-taking flag is tried with (name -> bytes)
BAD_CONTENT = {
    "empty": b"",
    "binary": b"\xff\xfe\x00\x01garbage\x80",
    "badjson": b'{"a": [1, 2,',
    "badyaml": b"a: [\n  - b: {\n",
    "deepjson": b"[" * 5000 + b"]" * 5000,
    "deepyaml": b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n",
    "bignum": b'{"x": ' + b"9" * 5000 + b"}",
    "scalar": b"42\n",
    "list": b"[1, 2, 3]\n",
    "nul": b'{"a": "\x00\x00"}\x00\x00',
}
#: file kinds that are not regular files or do not exist
BAD_KIND = ["MISSING", "DIR", "FIFO", "SOCK", "DEVZERO", "SPARSE"]


def make_inputs(d: str) -> Dict[str, str]:
    """Write every input file below ``d``; ``{placeholder: path}``."""
    paths: Dict[str, str] = {}

    def put(name: str, data) -> str:
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        paths[name.upper().replace(".", "_")] = p
        return p

    for name, data in BAD_CONTENT.items():
        put(name, data)
    paths["MISSING"] = os.path.join(d, "does-not-exist.json")
    paths["DIR"] = os.path.join(d, "adir")
    os.mkdir(paths["DIR"])
    paths["FIFO"] = os.path.join(d, "fifo")
    os.mkfifo(paths["FIFO"])
    paths["SOCK"] = os.path.join(d, "sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(paths["SOCK"])
    s.close()  # the socket file stays
    paths["DEVZERO"] = "/dev/zero"
    paths["SPARSE"] = os.path.join(d, "sparse")
    with open(paths["SPARSE"], "wb") as f:
        f.truncate(1 << 40)

    put("pod.json", json.dumps(GOOD_POD))
    put("topo.json", json.dumps({"cpus": _cpus()}))
    put("hints.json", json.dumps([{"cpu": [{"numa": [0], "preferred": True}]}]))
    put("devices.json", json.dumps([{"resource": "example.com/gpu", "id": "g1", "numa": 0}]))
    put("kconf.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    # pods whose resource values are hostile
    put("pod_nan.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    resources:\n      requests: {cpu: .nan}\n      limits: {cpu: .nan}\n")
    put("pod_inf.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    resources:\n      requests: {cpu: .inf, memory: -.inf}\n")
    put("pod_hugeq.json", _pod_with(cpu="1e9999999"))
    put("pod_bigmem.json", _pod_with(memory="9" * 5000))
    put("pod_bigint.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    resources:\n      requests: {memory: " + "9" * 5000 + "}\n")
    put("pod_negcpu.json", _pod_with(cpu="-2"))
    put("pod_badq.json", _pod_with(cpu="2 cores"))
    put("pod_nocontainers.json", json.dumps({"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": 5}}))
    put("pod_strspec.json", json.dumps({"kind": "Pod", "metadata": {"name": "x"}, "spec": "nope"}))
    put("pod_grace.json", json.dumps({**GOOD_POD, "spec": {**GOOD_POD["spec"],
                                      "terminationGracePeriodSeconds": 10 ** 30}}))
    put("pod_priority.json", json.dumps({**GOOD_POD, "spec": {**GOOD_POD["spec"], "priority": 10 ** 30}}))
    put("topo_bigcpu.json", json.dumps({"cpus": [{"id": 10 ** 12, "package": 0, "node": 0, "core": 0}]}))
    put("topo_negcpu.json", json.dumps({"cpus": [{"id": -1, "package": 0, "node": 0, "core": 0}]}))
    put("topo_bignode.json", json.dumps({"cpus": [{"id": 0, "package": 0, "node": 2 ** 40, "core": 0}]}))
    put("topo_nancpu.json", '{"cpus": [{"id": NaN, "package": 0, "node": 0, "core": 0}]}')
    put("topo_strcpus.json", json.dumps({"cpus": "0-3"}))
    put("topo_dist.json", json.dumps({"cpus": _cpus(), "distances": [[10, 20], [20]]}))
    put("topo_pynuma_bad.json", json.dumps({"format": "pynuma-topology/1", "cpus": [{"id": "x"}], "packages": 1}))
    put("hints_bad.json", json.dumps([{"cpu": [{"numa": [2 ** 40], "preferred": True}]}]))
    put("hints_neg.json", json.dumps([{"cpu": [{"numa": [-1], "preferred": "yes"}]}]))
    put("hints_dict.json", json.dumps({"cpu": []}))
    put("devices_bad.json", json.dumps([{"resource": "example.com/gpu", "id": "g1", "numa": 2 ** 70}]))
    put("devices_dict.json", json.dumps({"resource": "x"}))
    put("kconf_badq.yaml", "kind: KubeletConfiguration\nevictionHard: {memory.available: 1e9999999}\n")
    put("kconf_baddur.yaml", "kind: KubeletConfiguration\nevictionPressureTransitionPeriod: 99999999999999999999h\n")
    put("kconf_nan.yaml", "kind: KubeletConfiguration\nkubeReserved: {cpu: .nan}\nmaxPods: .nan\n")
    put("kconf_list.yaml", "- a\n- b\n")
    put("kconf_maxpods.yaml", "kind: KubeletConfiguration\nmaxPods: " + "9" * 5000 + "\n")
    put("stats_bad.json", json.dumps({"node": {"memory": {"availableBytes": 1e400}}}))
    put("stats_neg.json", json.dumps({"node": {"memory": {"availableBytes": "x", "workingSetBytes": -5}},
                                     "pods": "no"}))
    put("cpu_state.json", json.dumps({"policyName": "static", "defaultCpuSet": "0-1048575", "checksum": 1}))
    put("cpu_state_big.json", json.dumps({"policyName": "static", "defaultCpuSet": "0-1",
                                          "entries": {"p": {"c": "99999999999999999999"}}, "checksum": 2 ** 70}))
    put("mem_state.json", json.dumps({"policyName": "Static", "machineState": {"0": {"memoryMap": {
        "memory": {"total": 10 ** 30, "free": -1}}}}, "checksum": 1}))
    os.makedirs(os.path.join(d, "state"), exist_ok=True)
    paths["STATE"] = os.path.join(d, "state")
    paths["FILE_AS_DIR"] = put("plainfile", "x")
    # state directories whose CPU Manager checkpoint is each bad kind and bad content
    for kind in ["DIR", "FIFO", "SOCK", "DEVZERO", "SPARSE"] + [k.upper() for k in BAD_CONTENT]:
        sd = os.path.join(d, "state-" + kind.lower())
        os.makedirs(sd)
        os.symlink(paths[kind], os.path.join(sd, "cpu_manager_state"))
        paths["STATE_" + kind] = sd
    return paths


def _file_cases(prefix: str, argv: List[str], slot: str, kinds=None) -> List[Tuple[str, List[str]]]:
    """``argv`` with ``slot`` replaced by every bad kind and bad content."""
    out = []
    for kind in (kinds or BAD_KIND + [k.upper() for k in BAD_CONTENT]):
        out.append((f"{prefix}-{kind.lower()}", [a.replace(slot, "{" + kind + "}") for a in argv]))
    return out


_QUANTITIES = ["1e9999999", "9" * 5000, "nan", "-1Gi", "", "1Gb", "1e-99999999999", "1" + "0" * 30]
_DURATIONS = ["99999999999999999999h", "1e999s", "-5s", "nan", "", "5 minutes", "9" * 5000 + "s"]
_INTS = ["99999999999999999999", "-1", "abc", "9" * 5000, "1e3", ""]
_CPULISTS = ["0-1048575", "0-262143:1/1", "99999999999999999999", "-1", "1-0", ",,", "a", "0-3:0/4",
             "2147483648", "0-" + "9" * 5000]


def _values(prefix: str, argv: List[str], values: List[str]) -> List[Tuple[str, List[str]]]:
    return [(f"{prefix}-{i}", [a.replace("@", v) for a in argv]) for i, v in enumerate(values)]


def cases() -> List[Tuple[str, List[str]]]:
    c: List[Tuple[str, List[str]]] = []
    # -- files --------------------------------------------------------------
    c += _file_cases("topology-topology", ["topology", "--topology", "@F"], "@F")
    c += _file_cases("allocate-topology", ["allocate", "cpus", "--count", "1", "--topology", "@F"], "@F")
    c += _file_cases("hints-hints", ["hints", "merge", "--policy", "restricted", "--hints", "@F",
                                     "--topology", "{TOPO_JSON}"], "@F")
    c += _file_cases("admit-pod", ["admit", "@F", "--topology", "{TOPO_JSON}"], "@F")
    c += _file_cases("admit-devices", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--devices", "@F"], "@F")
    c += _file_cases("qos-pod", ["qos", "@F", "--memory-capacity", "64Gi"], "@F")
    c += _file_cases("state-show", ["state", "show", "@F"], "@F")
    # a directory is a state directory to check, not a bad file
    c += _file_cases("state-check", ["state", "check", "@F", "--topology", "{TOPO_JSON}"], "@F",
                     kinds=[k for k in BAD_KIND if k != "DIR"] + [k.upper() for k in BAD_CONTENT])
    c += _file_cases("eviction-pods", ["eviction", "--pods", "@F"], "@F")
    c += _file_cases("eviction-stats", ["eviction", "--stats", "@F"], "@F")
    # an empty KubeletConfiguration is all defaults, as the kubelet reads it: not bad input
    kconf_bad = BAD_KIND + [k.upper() for k in BAD_CONTENT if k != "empty"]
    c += _file_cases("eviction-kconf", ["eviction", "--kubelet-config", "@F"], "@F", kinds=kconf_bad)
    c += _file_cases("allocatable-kconf", ["allocatable", "--kubelet-config", "@F"], "@F", kinds=kconf_bad)
    c += _file_cases("admit-statefile", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--state-dir",
                                         "@F", "--cpu-policy", "static"], "@F",
                     kinds=["STATE_" + k for k in ["DIR", "FIFO", "SOCK", "DEVZERO", "SPARSE", "EMPTY", "BINARY",
                                                   "BADJSON", "DEEPJSON", "BIGNUM", "SCALAR", "LIST", "NUL"]])
    # -- hostile file contents --------------------------------------------------
    for pod in ["POD_NAN_YAML", "POD_INF_YAML", "POD_HUGEQ_JSON", "POD_BIGMEM_JSON", "POD_BIGINT_YAML",
                "POD_BADQ_JSON", "POD_NOCONTAINERS_JSON", "POD_STRSPEC_JSON"]:
        c.append((f"admit-{pod.lower()}", ["admit", "{" + pod + "}", "--topology", "{TOPO_JSON}"]))
        c.append((f"qos-{pod.lower()}", ["qos", "{" + pod + "}", "--memory-capacity", "64Gi"]))
        c.append((f"eviction-{pod.lower()}", ["eviction", "--pods", "{" + pod + "}"]))
    for pod in ["POD_GRACE_JSON", "POD_PRIORITY_JSON"]:  # numbers only eviction reads, beyond int64
        c.append((f"eviction-{pod.lower()}", ["eviction", "--pods", "{" + pod + "}", "--eviction-hard",
                                              "memory.available<1E"]))
    for topo in ["TOPO_BIGCPU_JSON", "TOPO_NEGCPU_JSON", "TOPO_BIGNODE_JSON", "TOPO_NANCPU_JSON",
                 "TOPO_STRCPUS_JSON", "TOPO_DIST_JSON", "TOPO_PYNUMA_BAD_JSON"]:
        c.append((f"allocate-{topo.lower()}", ["allocate", "cpus", "--count", "1", "--topology", "{" + topo + "}"]))
        c.append((f"admit-{topo.lower()}", ["admit", "{POD_JSON}", "--topology", "{" + topo + "}"]))
        c.append((f"topology-{topo.lower()}", ["topology", "--topology", "{" + topo + "}"]))
    for h in ["HINTS_BAD_JSON", "HINTS_NEG_JSON", "HINTS_DICT_JSON"]:
        c.append((f"hints-{h.lower()}", ["hints", "merge", "--policy", "restricted", "--hints", "{" + h + "}",
                                         "--topology", "{TOPO_JSON}"]))
    for dv in ["DEVICES_BAD_JSON", "DEVICES_DICT_JSON"]:
        c.append((f"admit-{dv.lower()}", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--devices",
                                          "{" + dv + "}"]))
    for k in ["KCONF_BADQ_YAML", "KCONF_BADDUR_YAML", "KCONF_NAN_YAML", "KCONF_LIST_YAML", "KCONF_MAXPODS_YAML"]:
        if k != "KCONF_NAN_YAML":  # eviction reads no reservation: a bad one is allocatable's to refuse
            c.append((f"eviction-{k.lower()}", ["eviction", "--kubelet-config", "{" + k + "}"]))
        c.append((f"allocatable-{k.lower()}", ["allocatable", "--kubelet-config", "{" + k + "}"]))
    for s in ["STATS_BAD_JSON", "STATS_NEG_JSON"]:
        c.append((f"eviction-{s.lower()}", ["eviction", "--stats", "{" + s + "}"]))
    for s in ["CPU_STATE_JSON", "CPU_STATE_BIG_JSON", "MEM_STATE_JSON"]:
        c.append((f"state-show-{s.lower()}", ["state", "show", "{" + s + "}"]))
        c.append((f"state-check-{s.lower()}", ["state", "check", "{" + s + "}", "--topology", "{TOPO_JSON}"]))
    # -- output files and directories that cannot be written ----------------------
    for where in ["{DIR}", "{MISSING}/x/y.json", "{FILE_AS_DIR}/x.json", "/proc/version", "/sys/pynuma.json"]:
        c.append((f"topology-save-{len(c)}", ["topology", "--topology", "{TOPO_PYNUMA}", "--save", where]))
    for where in ["/proc/1", "/sys", "{FILE_AS_DIR}", "{MISSING}/deeper"]:
        c.append((f"admit-commit-{len(c)}", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--cpu-policy",
                                             "static", "--state-dir", where, "--commit"]))
    # -- quantities -------------------------------------------------------------
    c += _values("qos-memory-capacity", ["qos", "{POD_JSON}", "--memory-capacity", "@"], _QUANTITIES)
    c += _values("allocatable-kube-reserved", ["allocatable", "--kube-reserved", "cpu=@"], _QUANTITIES)
    c += _values("allocatable-system-reserved", ["allocatable", "--system-reserved", "memory=@"], _QUANTITIES)
    c += _values("allocatable-capacity", ["allocatable", "--capacity", "memory=@"], _QUANTITIES)
    c += _values("allocatable-eviction-hard", ["allocatable", "--eviction-hard", "memory.available<@"], _QUANTITIES)
    c += _values("eviction-hard", ["eviction", "--eviction-hard", "memory.available<@"], _QUANTITIES + ["1e999%"])
    c += _values("eviction-soft", ["eviction", "--eviction-soft", "nodefs.available<@",
                                   "--eviction-soft-grace-period", "nodefs.available=1m"], _QUANTITIES)
    c += _values("eviction-min-reclaim", ["eviction", "--eviction-minimum-reclaim", "memory.available=@"],
                 _QUANTITIES)
    c += _values("admit-reserved-memory", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--memory-policy",
                                           "static", "--reserved-memory", "0:memory=@"], _QUANTITIES)
    c += _values("state-check-reserved-memory", ["state", "check", "{MEM_STATE_JSON}", "--topology", "{TOPO_JSON}",
                                                 "--reserved-memory", "0:memory=@"], _QUANTITIES)
    c += _values("bench-size", ["bench", "memory", "--size", "@"], ["1e9999999", "9" * 5000, "-1M", "1Q", "0"])
    # -- durations and counts -------------------------------------------------------
    c += _values("eviction-grace", ["eviction", "--eviction-soft", "memory.available<1Gi",
                                    "--eviction-soft-grace-period", "memory.available=@"], _DURATIONS)
    c += _values("eviction-transition", ["eviction", "--eviction-pressure-transition-period", "@"], _DURATIONS)
    # -1 is a valid int32 grace period; 1e3 a valid --watch; a huge --count is "watch for ever"
    c += _values("eviction-max-grace", ["eviction", "--eviction-max-pod-grace-period", "@"],
                 [v for v in _INTS if v != "-1"] + ["nan", "2147483648"])
    c += _values("eviction-watch", ["eviction", "--watch", "@", "--count", "1"],
                 [v for v in _INTS if v != "1e3"] + ["nan", "inf"])
    c += _values("eviction-count", ["eviction", "--watch", "1", "--count", "@"], [v for v in _INTS if not v.startswith("9")])
    c += _values("allocatable-max-pods", ["allocatable", "--max-pods", "@"], _INTS)
    c += _values("allocate-count", ["allocate", "cpus", "--topology", "{TOPO_JSON}", "--count", "@"], _INTS)
    c += _values("allocate-num-reserved", ["allocate", "cpus", "--topology", "{TOPO_JSON}", "--count", "1",
                                           "--num-reserved", "@"], _INTS)
    c += _values("bench-duration", ["bench", "memory", "--duration", "@"], ["nan", "inf", "-1", "1e999", "x"])
    c += _values("bench-threads", ["bench", "memory", "--threads", "@"], _INTS)
    c += _values("show-pid", ["show", "@"], _INTS + ["2147483648", "0x10"])
    c += _values("bind-pid", ["bind", "@", "--cpus", "0", "--dry-run"], _INTS + ["2147483648"])
    # -- cpulists and node lists ------------------------------------------------------
    c += _values("allocate-available", ["allocate", "cpus", "--topology", "{TOPO_JSON}", "--count", "1",
                                        "--available", "@"], _CPULISTS)
    c += _values("allocate-reserved", ["allocate", "cpus", "--topology", "{TOPO_JSON}", "--count", "1",
                                       "--reserved", "@"], _CPULISTS)
    c += _values("allocate-numa", ["allocate", "cpus", "--topology", "{TOPO_JSON}", "--count", "1",
                                   "--numa", "@"], _CPULISTS)
    c += _values("admit-reserved-cpus", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--cpu-policy", "static",
                                         "--reserved-cpus", "@"], _CPULISTS)
    c += _values("state-check-reserved-cpus", ["state", "check", "{CPU_STATE_JSON}", "--topology", "{TOPO_JSON}",
                                               "--reserved-cpus", "@"], _CPULISTS)
    c += _values("run-cpus", ["run", "--cpus", "@", "--dry-run", "--", "true"], _CPULISTS)
    c += _values("run-membind", ["run", "--membind", "@", "--dry-run", "--", "true"], _CPULISTS)
    c += _values("run-preferred", ["run", "--preferred", "@", "--dry-run", "--", "true"], _INTS[:4])
    c += _values("bind-cpus", ["bind", str(os.getpid() if False else 1), "--cpus", "@", "--dry-run"], _CPULISTS)
    c += _values("bench-cpu-nodes", ["bench", "memory", "--cpu-nodes", "@"], _CPULISTS)
    # -- options, policies, roots -----------------------------------------------------
    c += _values("admit-option", ["admit", "{POD_JSON}", "--topology", "{TOPO_JSON}", "--option", "@"],
                 ["max-allowable-numa-nodes=" + "9" * 5000, "max-allowable-numa-nodes=-1", "nope=1", "=", "x"])
    c += _values("allocate-option", ["allocate", "cpus", "--topology", "{TOPO_JSON}", "--count", "1", "--option", "@"],
                 ["full-pcpus-only=maybe", "distribute-cpus-across-numa=" + "9" * 5000, "nope"])
    c += _values("hints-policy", ["hints", "merge", "--policy", "@", "--hints", "{HINTS_JSON}", "--topology",
                                  "{TOPO_JSON}"], ["nope", "", "x" * 10000])
    c += _values("root", ["topology", "--root", "@"], ["{MISSING}", "{FILE_AS_DIR}", "{FIFO}", "/dev/zero"])
    c += _values("cgroups-root", ["cgroups", "--root", "@"], ["{MISSING}", "{FILE_AS_DIR}", "{FIFO}"])
    c += _values("hugepages-root", ["hugepages", "--root", "@"], ["{MISSING}", "{FILE_AS_DIR}"])
    c += [("unknown-command", ["frobnicate"]), ("no-args-topology", ["topology", "--nope"]),
          ("state-no-sub", ["state"]), ("allocate-no-count", ["allocate", "cpus"]),
          ("run-no-command", ["run", "--cpus", "0"])]
    return c


def substitute(argv: List[str], paths: Dict[str, str]) -> List[str]:
    out = []
    for a in argv:
        for k, v in paths.items():
            a = a.replace("{" + k + "}", v)
        out.append(a)
    return out


def run_case(argv: List[str], timeout: float = 60.0, mem_bytes: int = 2 << 30) -> subprocess.CompletedProcess:
    """Run ``pynuma argv`` in a child with an address-space cap and a timeout."""
    def limit():
        cap_address_space(mem_bytes)

    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pynuma", *argv], capture_output=True, timeout=timeout,
                          preexec_fn=limit, env=env, stdin=subprocess.DEVNULL)
