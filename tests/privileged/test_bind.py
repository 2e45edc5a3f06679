"""Real binding syscalls, verified through the kernel's own view.

Affinity and memory policy are changed only on child processes or on a
short-lived worker thread of the test process (both are per-thread state),
so the test runner itself is never left re-pinned.  Checks read
``/proc/PID/status`` (``Cpus_allowed_list``), ``/proc/PID/numa_maps`` and
``get_mempolicy``.  Memory-policy tests run on the native core and on the
pure twin (libc's ``syscall`` through cffi: what an install without a
compiler gets).
"""
from __future__ import annotations

import errno
import mmap
import os
import subprocess
import sys
import threading

import pytest

from pynuma import _impl, bind
from pynuma.cpuset import CPUSet
from pynuma.errors import AccessDenied, FakeRootRefused, InputError, Unsupported
from tests.fixtures import host

REQUIRE_NATIVE = os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1"
ALLOWED = host.allowed_cpus()
# a node policies can use: with memory and inside this process's cpuset (node 0 may be memory-less,
# and the lowest memory node may be outside a container's cpuset.mems, elsewhere)
MEM = host.memory_node()


def _status(pid, key, tid=None):
    path = f"/proc/{pid}/status" if tid is None else f"/proc/{pid}/task/{tid}/status"
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    raise KeyError(key)


def _first_policy(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/numa_maps") as f:
        return bind.parse_numa_maps_policy(f.readline())


@pytest.fixture
def child():
    """A sleeping child process with three extra threads."""
    code = "import threading, time\n[threading.Thread(target=time.sleep, args=(60,), daemon=True).start() for _ in range(3)]\nprint('ready', flush=True)\ntime.sleep(60)\n"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture(params=["native", "pure"])
def policy_sys(request, monkeypatch):
    """The memory-policy calls of ``bind`` made by the native core, then by the pure twin (cffi, no compiler)."""
    found = _impl.implementations("sys")
    if request.param not in found:
        if REQUIRE_NATIVE:
            pytest.fail("native sys module not built (PYNUMA_REQUIRE_NATIVE=1)")
        pytest.skip("native sys module not built")
    module = found[request.param]
    if not module.mempolicy_supported():
        pytest.skip(f"{request.param} path cannot make memory-policy calls here")
    monkeypatch.setattr(bind.mempolicy, "_sys", module)
    try:
        bind.get_mempolicy()
    except AccessDenied as err:  # seccomp or a sandbox forbids the memory-policy syscalls
        pytest.skip(f"memory-policy syscalls not permitted here: {err}")
    return request.param


def in_thread(fn):
    """Run ``fn(tid)`` on a fresh thread (per-thread policy/affinity never leaks); return its result."""
    box = {}

    def run():
        try:
            box["value"] = fn(threading.get_native_id())
        except BaseException as err:  # re-raised in the test
            box["error"] = err

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- affinity: native and pure twins agree with the kernel --------------------
def test_getaffinity_matches_the_kernel(backend):
    sys_mod = backend("sys")
    assert CPUSet.from_bits(sys_mod.sched_getaffinity(0, 1)) == ALLOWED
    assert sys_mod.gettid() == threading.get_native_id()


def test_setaffinity_on_a_child_shows_in_its_status(backend, child):
    sys_mod = backend("sys")
    target = CPUSet([ALLOWED.max()])
    sys_mod.sched_setaffinity(child.pid, target.bits)
    assert _status(child.pid, "Cpus_allowed_list") == str(target)
    assert CPUSet.from_bits(sys_mod.sched_getaffinity(child.pid, 1)) == target


def test_setaffinity_errors_name_the_syscall(backend):
    sys_mod = backend("sys")
    with pytest.raises(OSError) as info:
        sys_mod.sched_setaffinity(0x7FFFFFF0, ALLOWED.bits)  # no such thread
    assert info.value.errno == errno.ESRCH
    assert info.value.filename == "sched_setaffinity"


def test_set_affinity_main_thread_only_then_all_threads(child):
    tids = bind.thread_ids(child.pid)
    assert len(tids) == 4
    target = CPUSet([ALLOWED.min()])
    assert bind.set_affinity(str(target), child.pid) == [child.pid]
    others = [t for t in tids if t != child.pid]
    assert _status(child.pid, "Cpus_allowed_list", child.pid) == str(target)
    if target != ALLOWED:
        assert all(_status(child.pid, "Cpus_allowed_list", t) == str(ALLOWED) for t in others)
    changed = bind.set_affinity(target, child.pid, all_threads=True)
    assert sorted(changed) == sorted(tids)
    assert all(_status(child.pid, "Cpus_allowed_list", t) == str(target) for t in tids)
    assert bind.get_affinity(child.pid) == target


def test_invalid_cpu_ids_are_rejected_before_the_syscall(monkeypatch):
    calls = []
    monkeypatch.setattr(bind.affinity._sys, "sched_setaffinity", lambda *a: calls.append(a), raising=True)
    bad = bind.possible_cpus().max() + 1
    with pytest.raises(InputError, match=f"CPU {bad} does not exist"):
        bind.set_affinity([0, bad])
    with pytest.raises(InputError, match="invalid cpulist"):
        bind.set_affinity("0-x")
    with pytest.raises(InputError, match="empty CPU set"):
        bind.set_affinity("")
    assert calls == []


def test_kernel_einval_says_the_set_has_no_online_cpu(monkeypatch):
    def refuse(tid, bits):
        raise OSError(errno.EINVAL, "Invalid argument", "sched_setaffinity")

    monkeypatch.setattr(bind.affinity._sys, "sched_setaffinity", refuse)
    with pytest.raises(InputError, match="has no online CPU allowed"):
        bind.set_affinity(str(ALLOWED))


def test_a_set_of_offline_cpus_is_refused_naming_the_problem(tmp_path):
    from pynuma.fsroot import FsRoot

    cpu = tmp_path / "sys/devices/system/cpu"
    cpu.mkdir(parents=True)
    (cpu / "possible").write_text("0-3\n")
    (cpu / "online").write_text("0-1\n")
    fs = FsRoot(str(tmp_path))
    with pytest.raises(InputError, match=r"CPU set 2-3 has no online CPU \(online CPUs: 0-1\)"):
        bind.check_cpus(CPUSet.parse("2-3"), fs)
    bind.check_cpus(CPUSet.parse("1-3"), fs)  # one online CPU is enough


def test_a_fake_root_refuses_every_binding(tmp_path):
    from pynuma.fsroot import FsRoot

    fs = FsRoot(str(tmp_path))
    for call in (lambda: bind.set_affinity("0", fs=fs), lambda: bind.get_affinity(fs=fs),
                 lambda: bind.set_mempolicy("bind", "0", fs=fs), lambda: bind.migrate_pages(1, "0", "0", fs=fs)):
        with pytest.raises(FakeRootRefused):
            call()


# -- memory policy -----------------------------------------------------------
MODES = [("bind", f"{MEM}", f"bind:{MEM}"), ("interleave", f"{MEM}", f"interleave:{MEM}"),
         ("preferred", f"{MEM}", f"prefer:{MEM}"), ("local", None, "local"),
         ("preferred-many", f"{MEM}", f"prefer (many):{MEM}"),
         ("weighted-interleave", f"{MEM}", f"weighted interleave:{MEM}")]


@pytest.mark.parametrize("mode, nodes, shown", MODES, ids=[m[0] for m in MODES])
def test_set_mempolicy_every_mode_seen_by_kernel(policy_sys, mode, nodes, shown):
    def work(tid):
        try:
            bind.set_mempolicy(mode, nodes)
        except Unsupported as err:
            return ("unsupported", str(err))
        try:
            got = bind.get_mempolicy()
            with open(f"/proc/self/task/{tid}/numa_maps") as f:
                line = f.readline()
        finally:
            bind.set_mempolicy("default")
        return got, line

    result = in_thread(work)
    if result[0] == "unsupported":
        pytest.skip(result[1])
    got, line = result
    assert got.mode == mode
    assert got.nodes == (CPUSet() if nodes is None else CPUSet.parse(nodes))
    assert line.split()[1] == shown.split()[0]
    assert shown in line


@pytest.mark.parametrize("flag, word", [("static", "static"), ("relative", "relative")])
def test_static_and_relative_node_flags(policy_sys, flag, word):
    def work(tid):
        bind.set_mempolicy("bind", str(MEM), **{flag: True})
        try:
            return bind.get_mempolicy(), _first_policy(os.getpid(), tid)
        finally:
            bind.set_mempolicy("default")

    got, from_maps = in_thread(work)
    assert got == bind.MemPolicy("bind", CPUSet([MEM]), (word,))
    assert from_maps == got


def test_policy_never_leaks_out_of_the_worker_thread(policy_sys):
    before = bind.get_mempolicy()
    in_thread(lambda tid: bind.set_mempolicy("interleave", str(MEM)))
    assert bind.get_mempolicy() == before


def test_mems_allowed_matches_the_cpuset_view(policy_sys):
    assert str(bind.mems_allowed()) == _status("self", "Mems_allowed_list")


def test_policy_arguments_are_checked_before_the_syscall(policy_sys, monkeypatch):
    calls = []
    monkeypatch.setattr(bind.mempolicy._sys, "set_mempolicy", lambda *a: calls.append(a))
    bad = max(bind.numa_nodes()) + 1
    cases = [(("bind", str(bad)), f"NUMA node {bad} does not exist"), (("bind", None), "needs at least one node"),
             (("preferred", f"{MEM},{bad}"), "takes one node"), (("local", str(MEM)), "takes no nodes"),
             (("sideways", str(MEM)), "unknown memory policy mode"), (("bind", f"{MEM}-"), "node list")]
    for args, message in cases:
        with pytest.raises(InputError, match=message):
            bind.set_mempolicy(*args)
    with pytest.raises(InputError, match="exclude each other"):
        bind.set_mempolicy("bind", str(MEM), static=True, relative=True)
    assert calls == []


def test_mbind_and_page_nodes_on_a_buffer(policy_sys):
    size = 16 * mmap.PAGESIZE
    buf = mmap.mmap(-1, size)
    try:
        bind.mbind(buf, "bind", str(MEM), strict=True, move=True)
        assert set(bind.page_nodes(buf)) == {-errno.ENOENT}  # nothing touched yet
        buf.write(b"\x5a" * size)
        assert bind.page_nodes(buf) == [MEM] * 16
        value, bits = bind.mempolicy._sys.get_mempolicy(1, bind.mempolicy._sys.buffer_address(buf), bind.MPOL_F_ADDR)
        assert bind.decode_mode(value)[0] == "bind" and bits == 1 << MEM
        bind.mbind(buf, "interleave", str(MEM), offset=4 * mmap.PAGESIZE, length=4 * mmap.PAGESIZE)
    finally:
        buf.close()


def test_move_pages_and_migrate_pages_on_a_child(policy_sys):
    code = ("import mmap, sys\nfrom pynuma import _impl\ns = _impl.select('sys')\nm = mmap.mmap(-1, 8192)\n"
            "m.write(b'x' * 8192)\nprint(s.buffer_address(m), flush=True)\nsys.stdin.readline()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
                                 "PYNUMA_PURE": "1" if policy_sys == "pure" else "0"})
    try:
        addr = int(proc.stdout.readline())
        where = bind.move_pages(proc.pid, [addr, addr + mmap.PAGESIZE])
        assert all(node in bind.memory_nodes() for node in where)
        assert bind.move_pages(proc.pid, [addr], [MEM]) == [MEM]
        assert bind.move_pages(proc.pid, [addr]) == [MEM]
        assert bind.migrate_pages(proc.pid, str(MEM), str(MEM)) == 0
        with pytest.raises(InputError, match="NUMA node"):
            bind.migrate_pages(proc.pid, str(MEM), str(max(bind.numa_nodes()) + 1))
    finally:
        proc.stdin.write("\n")
        proc.stdin.flush()
        proc.wait()


def test_pure_twin_without_cffi_refuses_memory_policy_clearly(monkeypatch):
    pure = _impl.implementations("sys")["pure"]
    monkeypatch.setattr(bind.mempolicy, "_sys", pure)
    monkeypatch.setattr(pure, "_abi_module", None)
    monkeypatch.setattr(pure, "_abi_why", "cffi is not importable (No module named 'cffi')")
    assert not bind.mempolicy_supported()
    with pytest.raises(Unsupported, match="native core .* or cffi: cffi is not importable"):
        bind.set_mempolicy("bind", "0")
    with pytest.raises(Unsupported):
        bind.get_mempolicy()
    with pytest.raises(Unsupported, match="move_pages needs the native core or cffi"):
        pure.move_pages(0, [0])
    assert bind.supported_modes() == ()


def test_pure_twin_uses_cffi_only_when_a_memory_policy_call_is_made():
    code = ("import sys\nfrom pynuma import bind\nbind.set_affinity(bind.get_affinity())\n"
            "before = 'cffi' in sys.modules\nbind.mempolicy_supported()\nprint(before, 'cffi' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYNUMA_PURE": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "True"]


def test_abi_syscall_numbers_match_this_machines_headers():
    import re as _re

    from pynuma import _abi_syscall

    header = {"x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
              "aarch64": "/usr/include/aarch64-linux-gnu/asm/unistd.h"}.get(os.uname().machine)
    if header is None or not os.path.exists(header):
        pytest.skip("no kernel headers for this architecture")
    text = open(header).read()
    if "asm-generic/unistd.h" in text and os.path.exists("/usr/include/asm-generic/unistd.h"):
        text += open("/usr/include/asm-generic/unistd.h").read()
    for name, number in _abi_syscall.NUMBERS[os.uname().machine].items():
        assert _re.search(rf"#define __NR_{name}\s+{number}\b", text), name


def test_numa_maps_policy_parser_covers_kernel_spellings():
    cases = {
        "7f00 default anon=1": bind.MemPolicy("default", CPUSet(), ()),
        "7f00 bind=static:0-1 anon=1": bind.MemPolicy("bind", CPUSet.parse("0-1"), ("static",)),
        "7f00 interleave=relative:2 file=/x": bind.MemPolicy("interleave", CPUSet([2]), ("relative",)),
        "7f00 prefer (many):0,2 anon=1": bind.MemPolicy("preferred-many", CPUSet([0, 2]), ()),
        "7f00 weighted interleave:0-3": bind.MemPolicy("weighted-interleave", CPUSet.parse("0-3"), ()),
        "7f00 bind=static|balancing:1": bind.MemPolicy("bind", CPUSet([1]), ("static", "numa-balancing")),
        "7f00 local stack": bind.MemPolicy("local", CPUSet(), ()),
    }
    for line, want in cases.items():
        assert bind.parse_numa_maps_policy(line) == want
    with pytest.raises(ValueError):
        bind.parse_numa_maps_policy("7f00 sideways:0")


def test_supported_modes_probe_matches_what_set_mempolicy_accepts(policy_sys):
    modes = bind.supported_modes()
    assert {"default", "preferred", "bind", "interleave", "local"} <= set(modes)  # all since Linux 2.6
    before = bind.get_mempolicy()

    def accepted(tid):
        ok = []
        for mode in bind.MODES:
            try:
                bind.set_mempolicy(mode, None if mode in ("default", "local") else str(MEM))
                ok.append(mode)
            except Unsupported:
                pass
        bind.set_mempolicy("default")
        return tuple(ok)

    assert in_thread(accepted) == modes
    assert bind.get_mempolicy() == before  # the probe ran on its own thread


def test_sys_twins_have_the_same_functions():
    from tests.fixtures.twins import twin_functions

    names = twin_functions("sys")
    assert "sched_setaffinity" in names and "move_pages" in names


def test_supported_modes_probes_a_node_the_cpuset_allows(monkeypatch):
    # A container whose cpuset.mems holds node 1 only: the kernel refuses (EINVAL) every policy
    # naming node 0, so probing the lowest memory node would report bind/interleave/... unsupported.
    from pynuma.bind import _ids

    calls = []

    class Kernel:
        @staticmethod
        def mempolicy_supported():
            return True

        @staticmethod
        def get_mempolicy(width, addr, flags):
            assert flags == bind.MPOL_F_MEMS_ALLOWED
            return 0, 0b10

        @staticmethod
        def set_mempolicy(mode, bits, width):
            calls.append((bind.MODES[mode], bits))
            if bind.MODES[mode] not in ("default", "local") and not bits & 0b10:
                raise OSError(errno.EINVAL, "Invalid argument", "set_mempolicy")

    monkeypatch.setattr(bind.mempolicy, "_sys", Kernel)
    monkeypatch.setattr(_ids, "memory_nodes", lambda fs=None: CPUSet([0, 1]))
    assert bind.supported_modes() == bind.MODES
    assert {bits for mode, bits in calls if mode not in ("default", "local")} == {0b10}
