"""The SQLite ledger: assume / bind / forget / release / expire, conflicts, and the files derived from it."""
from __future__ import annotations

import os
import threading

import pytest

from pynuma.cpuset import CPUSet
from pynuma.errors import InputError, PynumaError
from pynuma.ledger.errors import ConflictError, FitError, NotInLedger
from pynuma.ledger.model import Placement
from pynuma.ledger.store import Ledger
from pynuma.pod import Pod
from pynuma.policy.memorymanager.state import Block
from pynuma.state import cpu_checkpoint, memory_checkpoint
from pynuma.state.memory_checkpoint import restore_manager


def pod(uid, cpu="1", memory="1Gi", **extra):
    res = {"cpu": cpu, "memory": memory, **extra}
    return Pod.from_dict({"name": f"pod-{uid}", "uid": uid,
                          "containers": [{"name": "app", "requests": res, "limits": res}]})


@pytest.fixture
def ledger(tmp_path):
    led = Ledger(str(tmp_path / "ledger.db"))
    led.configure(allocatable={"cpu": "4", "memory": "8Gi", "pods": "3"})
    yield led
    led.close()


def test_assume_bind_release_round_trip(ledger):
    e = ledger.assume(pod("a", cpu="2"), ttl=30, now=100.0)
    assert (e.state, e.deadline, e.requests["cpu"]) == ("assumed", 130.0, 2000)
    assert ledger.requested()["cpu"] == 2
    b = ledger.bind("a", now=101.0)
    assert (b.state, b.deadline, b.bound_at) == ("bound", None, 101.0)
    assert ledger.get("a").state == "bound"
    ledger.release("a")
    assert ledger.entries() == [] and ledger.requested() == {}


def test_a_pod_that_does_not_fit_is_refused_and_nothing_is_written(ledger):
    ledger.assume(pod("a", cpu="3"))
    gen = ledger.snapshot().generation
    with pytest.raises(FitError) as err:
        ledger.assume(pod("b", cpu="2"))
    assert err.value.result.reason == "OutOfcpu" and "Insufficient cpu" in err.value.result.reasons
    assert ledger.snapshot().generation == gen and [e.uid for e in ledger.entries()] == ["a"]


def test_pod_count_is_capacity_too(ledger):
    for uid in "abc":
        ledger.assume(pod(uid, cpu="100m", memory="1Mi"))
    with pytest.raises(FitError) as err:
        ledger.assume(pod("d", cpu="100m", memory="1Mi"))
    assert err.value.result.reasons == ("Too many pods",) and err.value.result.reason == "OutOfpods"


def test_seed_case_hugepages_on_an_empty_pool(tmp_path):
    led = Ledger(str(tmp_path / "l.db"))
    led.configure(allocatable={"cpu": "4", "memory": "8Gi", "pods": "10", "hugepages-1Gi": "0"})
    with pytest.raises(FitError) as err:
        led.assume(pod("a", **{"hugepages-1Gi": "2Gi"}))
    assert err.value.result.reason == "OutOfhugepages-1Gi"


def test_expire_drops_only_overdue_assumptions(ledger):
    ledger.assume(pod("a", cpu="100m"), ttl=10, now=0.0)
    ledger.assume(pod("b", cpu="100m"), ttl=100, now=0.0)
    ledger.assume(pod("c", cpu="100m"), ttl=1, now=0.0)
    ledger.bind("c")
    gone = ledger.expire(now=50.0)
    assert [e.uid for e in gone] == ["a"]
    assert sorted(e.uid for e in ledger.entries()) == ["b", "c"]


def test_forget_only_rolls_back_assumptions(ledger):
    ledger.assume(pod("a"))
    ledger.bind("a")
    with pytest.raises(NotInLedger, match="release it"):
        ledger.forget("a")
    ledger.assume(pod("b"))
    assert ledger.forget("b").uid == "b"
    with pytest.raises(NotInLedger):
        ledger.bind("b")
    with pytest.raises(NotInLedger):
        ledger.release("nope")


def test_a_stale_writer_gets_a_conflict(ledger):
    view = ledger.snapshot()
    ledger.assume(pod("a"))
    with pytest.raises(ConflictError, match="generation"):
        ledger.assume(pod("b"), expect_generation=view.generation)
    ledger.assume(pod("b"), expect_generation=ledger.snapshot().generation)


def test_the_same_pod_twice_is_a_conflict(ledger):
    ledger.assume(pod("a"))
    with pytest.raises(ConflictError, match="already assumed"):
        ledger.assume(pod("a"))


def test_exclusive_cpus_and_devices_are_never_held_twice(tmp_path):
    led = Ledger(str(tmp_path / "l.db"))
    led.configure(allocatable={"cpu": "8", "memory": "8Gi", "pods": "10"}, cpu_policy="static",
                  cpus=CPUSet.parse("0-7"),
                  devices=[{"resource": "example.com/gpu", "id": "g0", "numa": 0},
                           {"resource": "example.com/gpu", "id": "g1", "numa": 0}])
    led.assume(pod("a", cpu="2"), placement=Placement(cpus={"app": CPUSet.parse("2-3")}))
    with pytest.raises(ConflictError, match="CPU 3 is already held by pod a"):
        led.assume(pod("b", cpu="2"), placement=Placement(cpus={"app": CPUSet.parse("3-4")}))
    with pytest.raises(InputError, match="not among"):
        led.assume(pod("b", cpu="2"), placement=Placement(cpus={"app": CPUSet.parse("8-9")}))
    gpu = {"example.com/gpu": "1"}
    led.assume(pod("c", **gpu), placement=Placement(devices={"app": {"example.com/gpu": ["g0"]}}))
    with pytest.raises(ConflictError, match="g0"):
        led.assume(pod("d", **gpu), placement=Placement(devices={"app": {"example.com/gpu": ["g0"]}}))
    with pytest.raises(InputError, match="no device g7"):
        led.assume(pod("d", **gpu), placement=Placement(devices={"app": {"example.com/gpu": ["g7"]}}))
    # the inventory is the allocatable of its resource: two GPUs, one held
    assert led.snapshot().node_state().free("example.com/gpu") == 1
    led.release("c")
    led.assume(pod("d", **gpu), placement=Placement(devices={"app": {"example.com/gpu": ["g0"]}}))


def test_placement_function_decides_inside_the_transaction(ledger):
    seen = []

    def decide(view):
        seen.append(view.generation)
        return Placement()

    ledger.assume(pod("a"), placement=decide)
    assert seen == [ledger.snapshot().generation - 1]


def test_cpu_checkpoint_is_derived_from_the_ledger(tmp_path):
    led = Ledger(str(tmp_path / "l.db"))
    led.configure(allocatable={"cpu": "8", "memory": "8Gi", "pods": "10"}, cpu_policy="static",
                  cpus=CPUSet.parse("0-7"))
    path = tmp_path / "cpu_manager_state"
    assert cpu_checkpoint.load(path.read_text()).default == CPUSet.parse("0-7")
    led.assume(pod("a", cpu="2"), placement=Placement(cpus={"app": CPUSet.parse("4-5")}), bind=True)
    st = cpu_checkpoint.load(path.read_text(), configured_policy="static")
    assert st.default == CPUSet.parse("0-3,6-7") and st.assignments == {"a": {"app": CPUSet.parse("4-5")}}
    led.release("a")
    assert cpu_checkpoint.load(path.read_text()).assignments == {}


def test_memory_checkpoint_is_derived_and_valid_for_the_kubelet(tmp_path):
    from pynuma.policy.memorymanager.manager import MemoryManager
    from pynuma.policy.memorymanager.requests import NodeInfo

    led = Ledger(str(tmp_path / "l.db"))
    machine = [[0, 4 << 30, []], [1, 4 << 30, []]]
    led.configure(allocatable={"cpu": "8", "memory": "7Gi", "pods": "10"},
                  memory={"machine": machine, "reserved": {"0": {"memory": 1 << 30}, "1": {}}})
    led.assume(pod("a", memory="2Gi"), placement=Placement(memory={"app": [Block((1,), "memory", 2 << 30)]}))
    text = (tmp_path / "memory_manager_state").read_text()
    cp = memory_checkpoint.parse_checkpoint(text, policy="Static")
    assert cp.state.assignments["a"]["app"][0].size == 2 << 30
    # the kubelet's own validation (replay of the blocks against the machine) accepts it
    mm = MemoryManager.from_machine([NodeInfo(0, 4 << 30), NodeInfo(1, 4 << 30)], "0:memory=1Gi")
    restore_manager(mm, str(tmp_path / "memory_manager_state"))
    with pytest.raises(ConflictError, match="exceed"):
        led.assume(pod("b", memory="3Gi"), placement=Placement(memory={"app": [Block((1,), "memory", 3 << 30)]}))


def test_files_behind_the_ledger_are_found_and_rewritten_on_open(tmp_path):
    db = str(tmp_path / "l.db")
    led = Ledger(db)
    led.configure(allocatable={"cpu": "8", "memory": "8Gi", "pods": "10"}, cpu_policy="static",
                  cpus=CPUSet.parse("0-7"))
    before = (tmp_path / "cpu_manager_state").read_text()
    led.assume(pod("a", cpu="2"), placement=Placement(cpus={"app": CPUSet.parse("4-5")}))
    after = (tmp_path / "cpu_manager_state").read_text()
    # a writer killed after its commit but before the file rename leaves the old file (and a temp)
    (tmp_path / "cpu_manager_state").write_text(before)
    (tmp_path / ".cpu_manager_state.x1y2z3.tmp").write_text("half")
    problems = {(f.file, f.problem) for f in led.check_checkpoints()}
    assert problems == {("cpu_manager_state", "behind"), (".cpu_manager_state.x1y2z3.tmp", "stale-temp")}
    led.close()
    again = Ledger(db)
    assert again.synced_on_open == ["cpu_manager_state"]
    assert (tmp_path / "cpu_manager_state").read_text() == after
    assert not (tmp_path / ".cpu_manager_state.x1y2z3.tmp").exists()
    assert again.check_checkpoints() == []


def test_threads_share_one_ledger_without_overcommitting(ledger):
    ledger.configure(allocatable={"cpu": "4", "memory": "64Gi", "pods": "100"})
    won, lost = [], []

    def worker(i):
        try:
            ledger.assume(pod(f"t{i}", cpu="500m", memory="1Mi"))
            won.append(i)
        except FitError:
            lost.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 8 and len(lost) == 8
    assert ledger.requested()["cpu"] == 4


def test_an_unwritable_place_is_one_clear_error(tmp_path):
    missing = tmp_path / "no" / "such" / "dir"
    with pytest.raises(PynumaError, match=str(missing)):
        Ledger(str(missing / "l.db"))


def test_a_corrupt_database_is_an_error_naming_it(tmp_path):
    path = tmp_path / "l.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(PynumaError, match="l.db"):
        Ledger(str(path))


def test_unconfigured_ledger_refuses_to_guess(tmp_path):
    led = Ledger(str(tmp_path / "l.db"))
    with pytest.raises(InputError, match="allocatable"):
        led.assume(pod("a"))
    assert not os.path.exists(tmp_path / "cpu_manager_state")  # no CPU manager configured: no file


def test_a_fifo_or_device_in_place_of_a_checkpoint_never_blocks_and_is_replaced(tmp_path):
    led = Ledger(str(tmp_path / "l.db"))
    led.configure(allocatable={"cpu": "8", "memory": "8Gi", "pods": "10"}, cpu_policy="static",
                  cpus=CPUSet.parse("0-7"))
    path = tmp_path / "cpu_manager_state"
    path.unlink()
    os.mkfifo(path)
    assert [(f.file, f.problem) for f in led.check_checkpoints()] == [("cpu_manager_state", "unreadable")]
    path.unlink()
    path.symlink_to("/dev/zero")
    assert led.sync_checkpoints() == ["cpu_manager_state"]
    st = os.lstat(path)
    import stat

    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644
    assert cpu_checkpoint.load(path.read_text()).default == CPUSet.parse("0-7")
