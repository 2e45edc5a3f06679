"""The memory benchmark's loops and bookkeeping, on tiny buffers (native and pure twins)."""
from __future__ import annotations

import mmap
import os

import pytest
from hypothesis import given, settings, strategies as st

from pynuma import _impl, membench
from pynuma.errors import InputError


def _cycle(buf, stride):
    """Slots visited from offset 0 until the walk returns (the chase buffer's cycle)."""
    words = memoryview(buf).cast("B")[: len(buf) // 8 * 8].cast("Q")
    seen = []
    off = 0
    while True:
        seen.append(off)
        off = words[off // 8]
        if off == 0 or len(seen) > len(buf):
            return seen


@pytest.mark.parametrize("slots, stride", [(2, 8), (3, 64), (64, 64), (100, 128)])
def test_chase_buffer_is_one_cycle_through_every_slot(backend, slots, stride):
    impl = backend("membench")
    buf = bytearray(slots * stride)
    impl.chase_build(buf, stride, 7)
    visited = _cycle(buf, stride)
    assert sorted(visited) == [i * stride for i in range(slots)]


@given(slots=st.integers(2, 300), seed=st.integers(0, 2**64 - 1), stride=st.sampled_from([8, 16, 64]))
@settings(max_examples=100, deadline=None)
def test_native_and_pure_build_the_same_buffer(slots, seed, stride):
    impls = _impl.implementations("membench")
    if "native" not in impls:
        pytest.skip("native membench not built")
    a, b = bytearray(slots * stride + 5), bytearray(slots * stride + 5)
    impls["native"].chase_build(a, stride, seed)
    impls["pure"].chase_build(b, stride, seed)
    assert a == b


def test_chase_run_follows_the_links(backend):
    impl = backend("membench")
    buf = bytearray(32 * 64)
    impl.chase_build(buf, 64, 3)
    order = _cycle(buf, 64)
    ns, end = impl.chase_run(buf, 0, 5)
    assert end == order[5] and ns >= 0
    assert impl.chase_run(buf, 0, 32)[1] == 0  # a full lap returns to the start


def test_read_and_copy_loops(backend):
    impl = backend("membench")
    src = bytearray(os.urandom(4096 + 3))
    ns, total = impl.read_run(src, 2)
    words = memoryview(src)[:4096].cast("Q")
    assert total == sum(words) % (1 << 64) and ns >= 0
    dst = bytearray(len(src))
    impl.copy_run(dst, src, 2)
    assert dst == src


@pytest.mark.parametrize("call", [
    lambda m: m.chase_build(bytearray(64), 12, 1),      # stride not a multiple of 8
    lambda m: m.chase_build(bytearray(64), 64, 1),      # a single slot
    lambda m: m.chase_run(bytearray(64), 64, 1),        # start outside
    lambda m: m.copy_run(bytearray(8), bytearray(16), 1),
    lambda m: m.read_run(bytearray(), 1),
])
def test_bad_buffers_raise_valueerror(backend, call):
    with pytest.raises(ValueError):
        call(backend("membench"))


def test_single_measurements_on_a_tiny_buffer():
    buf = mmap.mmap(-1, 64 * 1024)
    lat = membench.chase_latency(buf, 0.01)
    assert lat > 0
    src, dst = mmap.mmap(-1, 64 * 1024), mmap.mmap(-1, 64 * 1024)
    src.write(b"\x01" * len(src))
    assert membench.read_bandwidth(src, 0.01) > 0
    assert membench.copy_bandwidth(dst, src, 0.01) > 0
    assert dst[:] == src[:]


def test_run_on_this_host_gives_a_square_per_reported_node():
    from pynuma.discover import discover

    topo = discover()
    result = membench.run(topo, size=256 * 1024, duration=0.01, threads=2)
    assert len(result.latency_ns) == len(result.cpu_nodes)
    for i, node in enumerate(result.cpu_nodes):
        j = result.mem_nodes.index(node) if node in result.mem_nodes else None
        if j is not None:
            assert result.latency_ns[i][j] > 0 and result.normalised[i][j] == 10
            assert result.read_gbps[i][j] > 0 and result.copy_gbps[i][j] > 0
    data = result.to_dict()
    assert data["size_bytes"] == 256 * 1024 and data["threads"] == 2
    assert data["firmware"] is None or len(data["firmware"]) == len(result.cpu_nodes)


def test_run_without_memory_policy_calls_measures_only_local_memory(monkeypatch):
    from pynuma import bind
    from pynuma.discover import discover

    monkeypatch.setattr(membench, "_bench", _impl.implementations("membench")["pure"])
    pure_sys = _impl.implementations("sys")["pure"]
    monkeypatch.setattr(bind.affinity, "_sys", pure_sys)
    monkeypatch.setattr(bind.mempolicy, "_sys", pure_sys)
    # a pure install without cffi: no memory-policy syscalls, so buffers cannot be placed on a node
    monkeypatch.setattr(pure_sys, "mempolicy_supported", lambda: False)
    result = membench.run(discover(), size=8192, duration=0.001)
    assert not result.memory_bound and result.warnings
    for i, row in enumerate(result.latency_ns):
        for j, value in enumerate(row):
            assert (value is None) == (result.cpu_nodes[i] != result.mem_nodes[j])


def test_run_with_the_pure_loops_binds_memory_through_cffi(monkeypatch):
    from pynuma import bind
    from pynuma.discover import discover

    pure_sys = _impl.implementations("sys")["pure"]
    if not pure_sys.mempolicy_supported():
        pytest.skip("cffi cannot make memory-policy calls here")
    monkeypatch.setattr(membench, "_bench", _impl.implementations("membench")["pure"])
    monkeypatch.setattr(bind.affinity, "_sys", pure_sys)
    monkeypatch.setattr(bind.mempolicy, "_sys", pure_sys)
    result = membench.run(discover(), size=8192, duration=0.001)
    assert result.memory_bound
    assert not any("memory policy unavailable" in w for w in result.warnings)
    assert any(value for row in result.latency_ns for value in row if value is not None)


def test_normalise_scales_rows_to_local_10():
    got = membench.normalise([[100.0, 210.0], [190.0, 95.0]], [0, 1], [0, 1])
    assert got == [[10, 21], [20, 10]]
    # CPU node without memory: its best pair becomes 10; unmeasured pairs stay None
    assert membench.normalise([[120.0, None, 180.0]], [5], [0, 1, 2]) == [[10, None, 15]]


@pytest.mark.parametrize("text, value", [("65536", 65536), ("64K", 64 << 10), ("64M", 64 << 20), ("1g", 1 << 30),
                                         ("64MiB", 64 << 20), ("2GB", 2 << 30), ("8 M", 8 << 20)])
def test_parse_size(text, value):
    assert membench.parse_size(text) == value


@pytest.mark.parametrize("text", ["", "lots", "1.5G", "-1M", "64X", "64iB"])
def test_parse_size_rejects(text):
    with pytest.raises(InputError):
        membench.parse_size(text)


def test_run_rejects_bad_parameters():
    from pynuma.discover import discover

    topo = discover()
    with pytest.raises(InputError):
        membench.run(topo, size=64, duration=0.01)
    with pytest.raises(InputError):
        membench.run(topo, size=1 << 20, duration=0)


def test_native_loops_release_the_gil():
    impls = _impl.implementations("membench")
    if "native" not in impls:
        pytest.skip("native membench not built")
    import threading
    import time

    native = impls["native"]
    buf = mmap.mmap(-1, 8 << 20)
    native.chase_build(buf, 64, 5)
    # size the run to ~0.1 s on this machine (a big last-level cache makes each load cheap)
    # best of three: a probe stretched by preemption on a loaded box would shrink the run
    probe_ns = min(native.chase_run(buf, 0, 50_000)[0] for _ in range(3))
    steps = max(50_000, int(50_000 * 100e6 / max(probe_ns, 1)))
    state = {"started": False, "done": False}

    def worker():
        state["started"] = True
        native.chase_run(buf, 0, steps)  # about a tenth of a second of dependent loads
        state["done"] = True

    t = threading.Thread(target=worker)
    t.start()
    while not state["started"]:
        time.sleep(0.0005)
    ticks = 0
    while not state["done"]:
        ticks += 1
        time.sleep(0.0005)
    t.join()
    # With the GIL held through the loop this thread could not wake up until it ended.
    assert ticks >= 10


def test_native_and_pure_twins_have_the_same_functions():
    from tests.fixtures.twins import twin_functions

    assert twin_functions("membench") == ["chase_build", "chase_run", "copy_run", "read_run"]


@pytest.mark.parametrize("duration", ["nan", "inf"])
def test_cli_rejects_non_finite_durations(duration, capsys):
    # nan/inf passed the "> 0" check and the measurement loop never ended
    from pynuma.cli import main

    rc = main(["bench", "memory", "--duration", duration, "--size", "64K"])
    err = capsys.readouterr().err
    assert rc == 2 and "--duration" in err and len(err.strip().splitlines()) == 1


class _Cache:
    def __init__(self, size):
        self.size_bytes = size


class _Topo:
    def __init__(self, *sizes):
        self.caches = [_Cache(s) for s in sizes]


@pytest.mark.parametrize("caches,available_kb,want", [
    ((32 << 10, 1 << 20, 32 << 20), 1 << 30, 128 << 20),     # 4 x the largest cache
    ((256 << 20,), 64 << 30, membench.MAX_DEFAULT),          # a huge LLC: capped
    ((1 << 20,), 64 << 30, membench.MIN_DEFAULT),            # a tiny one: floored
    ((), 64 << 30, membench.DEFAULT_SIZE),                   # caches unknown
    ((64 << 20,), 400 << 10, 100 << 20),                     # a small VM: a quarter of MemAvailable
    ((64 << 20,), 8 << 10, membench.MIN_DEFAULT),            # never below the floor
])
def test_default_size_from_the_caches_and_available_memory(tmp_path, caches, available_kb, want):
    from pynuma.fsroot import FsRoot

    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "meminfo").write_text(f"MemTotal: {available_kb * 2} kB\nMemAvailable: {available_kb} kB\n")
    assert membench.default_size(_Topo(*caches), FsRoot(str(tmp_path))) == want


def test_one_measurement_holds_about_one_buffer(monkeypatch):
    """The streams' buffers are made after the chase's is gone, the copy's after the read's:
    at most about ``size`` bytes are mapped at any time (it was 3 x, plus a size-long temporary)."""
    import threading

    size = 8 << 20
    live, peak = [0], [0]
    lock = threading.Lock()
    real_mmap = mmap.mmap

    class Tracked(real_mmap):
        def __new__(cls, fileno, length, *args, **kwargs):
            with lock:
                live[0] += length
                peak[0] = max(peak[0], live[0])
            return super().__new__(cls, fileno, length, *args, **kwargs)

        def close(self):
            if not self.closed:
                with lock:
                    live[0] -= len(self)
            super().close()

    monkeypatch.setattr(mmap, "mmap", Tracked)
    from pynuma import bind

    for threads in (1, 2):
        peak[0] = 0
        membench._pair(bind.get_affinity(0), 0, size, 0.01, threads, False)
        assert size <= peak[0] <= size + 2 * mmap.PAGESIZE * threads, (threads, peak[0])
        assert live[0] == 0
