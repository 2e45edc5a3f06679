"""The per-process reader (native/pn_procs.c and its pure twin) on fake /proc trees.

Each case runs on both implementations (``backend``); the pure twin is the
oracle, and the property test feeds both the same random numa_maps text.
"""
from __future__ import annotations

import errno
import os

import pytest
from hypothesis import given, settings, strategies as st

from pynuma import _impl
from tests.fixtures.proc_builder import maps_line, put_process
from tests.fixtures.sysfs_builder import put
from tests.fixtures.twins import twin_functions

ALL = 1 | 2 | 4 | 8


def read(backend, root, pids, flags=ALL):
    mod = backend("procs")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return mod.read_processes(fd, pids, flags)
    finally:
        os.close(fd)


def maps_of(backend, tmp_path, text):
    put(tmp_path, "/proc/7/numa_maps", text)
    put(tmp_path, "/proc/7/stat", "7 (x) S 1\n")
    out = read(backend, str(tmp_path), [7], 4)[0]
    return out[2:7]  # rc, lines, bad, counts, policies


def test_twins_offer_the_same_functions():
    assert twin_functions("procs") == ["limits", "read_processes"]
    impls = _impl.implementations("procs")
    if "native" in impls:
        assert impls["native"].limits() == impls["pure"].limits()
        for flag in ("STAT", "STATUS", "MAPS", "THREADS"):
            assert getattr(impls["native"], flag) == getattr(impls["pure"], flag)


def test_one_process_raw(backend, tmp_path):
    text = (maps_line(0x1000, "default", {0: 10, 1: 3}) + maps_line(0x2000, "bind:1", {1: 2}, page_kb=2048, huge=True)
            + maps_line(0x3000, "default", {1: 4}))
    put_process(tmp_path, 42, "srv", uid=1000, numa_maps=text, threads=[(42, 1, "0-1"), (44, 3, "2-3")])
    [res] = read(backend, str(tmp_path), [42])
    stat, status, rc, lines, bad, counts, policies, nthreads, threads = res
    assert stat.startswith("42 (srv) S ")
    assert "Cpus_allowed_list:\t0-1" in status
    assert (rc, lines, bad) == (0, 3, 0)
    # classes in order of first use, nodes ascending within each
    assert counts == [(4, 0, 0, 10), (4, 0, 1, 7), (2048, 1, 1, 2)]
    assert policies == [("default", 2), ("bind:1", 1)]
    assert nthreads == 2
    assert threads == [(42, 1, "0-1"), (44, 3, "2-3")]


def test_flags_choose_what_is_read(backend, tmp_path):
    put_process(tmp_path, 5, "a", numa_maps=maps_line(0x1000, "default", {0: 1}))
    [res] = read(backend, str(tmp_path), [5], 4)
    assert res[0] == res[1] == -errno.ENODATA and res[7] == -errno.ENODATA and res[8] == []
    assert res[2:4] == (0, 1)
    [res] = read(backend, str(tmp_path), [5], 1 | 8)
    assert isinstance(res[0], str) and res[2] == -errno.ENODATA and res[5] == [] and res[8] == [(5, 0, "0-1")]


def test_gone_and_missing_files(backend, tmp_path):
    put_process(tmp_path, 5, "a", numa_maps=None, threads=[])
    out = read(backend, str(tmp_path), [5, 6, 0, -3])
    assert out[1] == -errno.ENOENT and out[2] == out[3] == -errno.ESRCH
    stat, status, rc, lines, bad, counts, policies, nthreads, threads = out[0]
    assert rc == -errno.ENOENT and (lines, bad, counts, policies) == (0, 0, [], [])
    assert nthreads == -errno.ENOENT and threads == []


@pytest.mark.parametrize("text, expect", [
    # no kernelpagesize_kB (kernels before it was printed): page_kb 0, the huge word kept for the caller
    ("1000 default huge anon=2 N0=2\n2000 default anon=1 N1=1\n", [(0, 1, 0, 2), (0, 0, 1, 1)]),
    # a line without a newline at the end still counts; blank lines are nothing
    ("\n1000 default N0=3 kernelpagesize_kB=4\n   \n2000 default N0=1 kernelpagesize_kB=4", [(4, 0, 0, 4)]),
    # zero pages are not listed; leading zeros are numbers
    ("1000 default N0=0 N1=007 kernelpagesize_kB=004\n", [(4, 0, 1, 7)]),
    # tabs and repeated spaces separate words too
    ("1000\tdefault  N0=2\tkernelpagesize_kB=4\n", [(4, 0, 0, 2)]),
    # a node twice on a line adds up
    ("1000 default N0=2 N0=3 kernelpagesize_kB=4\n", [(4, 0, 0, 5)]),
])
def test_numa_maps_counts(backend, tmp_path, text, expect):
    rc, lines, bad, counts, _ = maps_of(backend, tmp_path, text)
    assert rc == 0 and bad == 0
    assert counts == expect


@pytest.mark.parametrize("line", [
    "1000\n",                                     # no policy
    "1000 default N1024=1 kernelpagesize_kB=4\n",  # beyond MAX_NUMNODES
    "1000 default N0=x kernelpagesize_kB=4\n",
    "1000 default N0 kernelpagesize_kB=4\n",
    "1000 default N0=1 kernelpagesize_kB=\n",
    "1000 default N0=1 kernelpagesize_kB=4294967296\n",
    "1000 default N0=68719476736\n",               # 2^36 pages: beyond the bound
    "1000 " + "p" * 257 + " N0=1\n",              # an over-long policy word
])
def test_bad_lines_are_counted_and_skipped(backend, tmp_path, line):
    good = "2000 default N0=5 kernelpagesize_kB=4\n"
    rc, lines, bad, counts, policies = maps_of(backend, tmp_path, good + line + good)
    assert (rc, lines, bad) == (0, 2, 1)
    assert counts == [(4, 0, 0, 10)]
    assert policies == [("default", 2)]


def test_words_that_are_not_counts_are_ignored(backend, tmp_path):
    text = "1000 default file=/lib/N0=9 Nx=1 N=3 anon=4 mapmax=2 N0=1 kernelpagesize_kB=4\n"
    rc, lines, bad, counts, _ = maps_of(backend, tmp_path, text)
    assert (rc, lines, bad, counts) == (0, 1, 0, [(4, 0, 0, 1)])


def test_policy_names_with_a_space_are_one_word(backend, tmp_path):
    text = ("1000 prefer (many):0-1 anon=1 N0=1 kernelpagesize_kB=4\n"
            "2000 weighted interleave:0-1 anon=1 N1=1 kernelpagesize_kB=4\n"
            "3000 prefer:1 anon=1 N1=1 kernelpagesize_kB=4\n")
    rc, lines, bad, _, policies = maps_of(backend, tmp_path, text)
    assert (rc, lines, bad) == (0, 3, 0)
    assert policies == [("prefer (many):0-1", 1), ("weighted interleave:0-1", 1), ("prefer:1", 1)]


def test_policy_table_full_still_counts_pages(backend, tmp_path):
    limit = backend("procs").limits()["policies"]
    text = "".join(f"{i:x} bind:{i} N0=1 kernelpagesize_kB=4\n" for i in range(limit + 5))
    rc, lines, bad, counts, policies = maps_of(backend, tmp_path, text)
    assert (rc, lines, bad) == (0, limit + 5, 0)
    assert counts == [(4, 0, 0, limit + 5)]
    assert len(policies) == limit and policies[-1] == (f"bind:{limit - 1}", 1)


def test_too_many_page_size_classes_make_bad_lines(backend, tmp_path):
    limit = backend("procs").limits()["classes"]
    text = "".join(f"{i:x} default N0=1 kernelpagesize_kB={4 << i}\n" for i in range(limit + 2))
    rc, lines, bad, counts, _ = maps_of(backend, tmp_path, text)
    assert (rc, lines, bad) == (0, limit, 2)
    assert len(counts) == limit


def test_an_over_long_line_is_one_bad_line(backend, tmp_path):
    limit = backend("procs").limits()["line"]
    long_line = "1000 default " + "x" * (3 * limit) + " N0=9\n"
    text = "2000 default N0=1\n" + long_line + "3000 default N0=2\n" + "4000 default " + "y" * (limit + 1)
    rc, lines, bad, counts, _ = maps_of(backend, tmp_path, text)
    assert (rc, lines, bad) == (0, 2, 2)
    assert counts == [(0, 0, 0, 3)]


def test_numa_maps_beyond_the_size_limit_stops_there(backend, tmp_path):
    limits = backend("procs").limits()
    path = tmp_path / "proc/7/numa_maps"
    path.parent.mkdir(parents=True)
    line = b"1000 default N0=1 kernelpagesize_kB=4\n"
    with open(path, "wb") as f:
        f.write(line)
        f.truncate(limits["maps"] - 10)  # sparse: zeros, one over-long "line"
        f.seek(0, 2)
        f.write(b"\n" + line * 4)
    put(tmp_path, "/proc/7/stat", "7 (x) S\n")
    rc, lines, bad, counts, _ = read(backend, str(tmp_path), [7], 4)[0][2:7]
    assert rc == -errno.EFBIG
    # the first line counts, the zeros are one bad line, the last lines lie beyond the limit
    assert (lines, bad, counts) == (1, 1, [(4, 0, 0, 1)])


def test_special_files_are_refused_without_blocking(backend, tmp_path):
    put(tmp_path, "/proc/7/stat", "7 (x) S\n")
    os.mkfifo(tmp_path / "proc/7/numa_maps")
    (tmp_path / "proc/7/status").mkdir()
    res = read(backend, str(tmp_path), [7], 1 | 2 | 4)[0]
    assert res[2] == -errno.EINVAL
    assert res[1] in (-errno.EISDIR, -errno.EINVAL)


def test_links_stay_inside_the_root(backend, tmp_path):
    put(tmp_path, "/etc/secret", "1000 default N0=99 kernelpagesize_kB=4\n")
    put(tmp_path, "/proc/7/stat", "7 (x) S\n")
    os.symlink("/etc/secret", tmp_path / "proc/7/numa_maps")  # absolute: re-based on the root
    res = read(backend, str(tmp_path), [7], 4)[0]
    assert res[5] == [(4, 0, 0, 99)]
    os.symlink("/proc/7", tmp_path / "proc/8")  # a pid directory that is a link (like /proc/self)
    assert read(backend, str(tmp_path), [8], 4)[0][5] == [(4, 0, 0, 99)]


def test_thread_details(backend, tmp_path):
    put_process(tmp_path, 9, "t", threads=[(9, 0, "0-3"), (12, 2, "1")])
    put(tmp_path, "/proc/9/task/10/stat", "10 (a) b) S 1\n")                   # too few fields, ')' in the name
    put(tmp_path, "/proc/9/task/11/status", "Name:\tx\nCpus_allowed_list:  \t 2-3 \t\r\n")  # no stat file
    put(tmp_path, "/proc/9/task/notanumber/stat", "whatever")
    put(tmp_path, "/proc/9/task/0/stat", "whatever")
    res = read(backend, str(tmp_path), [9], 8)[0]
    assert res[7] == 4
    assert res[8] == [(9, 0, "0-3"), (10, -1, -errno.ENOENT), (11, -1, "2-3"), (12, 2, "1")]


def test_no_descriptor_leaks(backend, tmp_path):
    put_process(tmp_path, 9, "t", numa_maps=maps_line(0x1000, "default", {0: 1}), threads=[(9, 0, "0"), (10, 1, "1")])
    (tmp_path / "proc/9/task/10/status").unlink()
    os.mkfifo(tmp_path / "proc/9/task/10/status")
    before = sorted(os.listdir("/proc/self/fd"))
    for _ in range(3):
        read(backend, str(tmp_path), [9, 10, 11])
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_live_self_agrees_between_twins():
    impls = _impl.implementations("procs")
    if "native" not in impls:
        pytest.skip("native reader not built")
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        # threads and pages change between two reads of a live process; its identity and shape do not
        a = impls["native"].read_processes(fd, [os.getpid()], 1 | 2 | 8)[0]
        b = impls["pure"].read_processes(fd, [os.getpid()], 1 | 2 | 8)[0]
    finally:
        os.close(fd)
    assert a[0].split(")")[0] == b[0].split(")")[0]
    assert [t[0] for t in a[8]] == [t[0] for t in b[8]]
    assert [t[2] for t in a[8]] == [t[2] for t in b[8]]


_WORDS = st.sampled_from(["default", "bind:0-1", "interleave=static:0", "prefer", "(many):1", "weighted",
                          "interleave:1", "huge", "anon=3", "dirty=1", "file=/x", "N0=1", "N1=22", "N01=3",
                          "N1023=5", "N1024=1", "N0=", "N2=x", "Nx", "kernelpagesize_kB=4",
                          "kernelpagesize_kB=2048", "kernelpagesize_kB=", "stack", "heap", "=", "N", "\t", "(",
                          "\xff", "N0=99999999999", "N3=000000000000000000000000007", "kernelpagesize_kB=01"])
_LINES = st.lists(st.one_of(st.lists(_WORDS, max_size=8).map(" ".join), st.text(max_size=20)), max_size=12)


@settings(max_examples=int(os.environ.get("PYNUMA_FUZZ_EXAMPLES", "150")))
@given(lines=_LINES, newline_at_end=st.booleans())
def test_twins_agree_on_any_numa_maps(tmp_path_factory, lines, newline_at_end):
    impls = _impl.implementations("procs")
    if "native" not in impls:
        pytest.skip("native reader not built")
    root = tmp_path_factory.mktemp("maps")
    text = "\n".join(f"{i:x} {line}" if i % 3 else line for i, line in enumerate(lines))
    put(root, "/proc/3/numa_maps", text + ("\n" if newline_at_end else ""))
    put(root, "/proc/3/stat", "3 (x) S\n")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert impls["native"].read_processes(fd, [3], 4) == impls["pure"].read_processes(fd, [3], 4)
    finally:
        os.close(fd)


def test_the_leader_thread_reuses_the_process_files_when_they_were_read(backend, tmp_path):
    put_process(tmp_path, 9, "t", threads=[(9, 1, "0-3"), (10, 2, "2")])
    # the leader's task files disagree with the process files: which ones were read shows
    put(tmp_path, "/proc/9/task/9/status", "Cpus_allowed_list:\t7\n")
    (tmp_path / "proc/9/task/9/stat").unlink()
    both = read(backend, str(tmp_path), [9], 1 | 2 | 8)[0]
    assert both[8] == [(9, 1, "0-3"), (10, 2, "2")]
    alone = read(backend, str(tmp_path), [9], 8)[0]
    assert alone[8] == [(9, -1, "7"), (10, 2, "2")]
