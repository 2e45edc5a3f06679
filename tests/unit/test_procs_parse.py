"""The rules that give the per-process reader's raw texts and counts their meaning (no I/O)."""
from __future__ import annotations

import pytest

from pynuma.bind.procview import parse_policy_word
from pynuma.cpuset import CPUSet
from pynuma.procs.parse import (bytes_by_node, full_name, page_bytes, parse_cmdline, parse_kb, parse_stat,
                                parse_uid, status_fields)
from pynuma.procs.select import Identity, Selector
from pynuma.errors import InputError
from tests.fixtures.proc_builder import stat_text


def test_stat_fields_and_commands_holding_parentheses():
    st = parse_stat(stat_text(12, "a) (b", processor=3, threads=5, utime=7, stime=2))
    assert (st.comm, st.state, st.threads, st.utime, st.stime, st.processor) == ("a) (b", "S", 5, 7, 2, 3)
    assert not st.kernel_thread
    assert parse_stat(stat_text(2, "kthreadd", kernel_thread=True)).kernel_thread
    short = parse_stat("1 (init) S " + " ".join(["0"] * 20))  # an old kernel: no processor field
    assert short.processor == -1


@pytest.mark.parametrize("text", ["", "1 init S 0", "1 (x) S 1 2", "1 (x) S " + " ".join(["z"] * 40)])
def test_bad_stat_texts(text):
    with pytest.raises(ValueError):
        parse_stat(text)


def test_status_fields_and_values():
    text = "Name:\tx\nUid:\t1000\t1000\t0\t0\nVmRSS:\t  2048 kB\nCpus_allowed_list:\t0-3\nUid:\t5\n"
    fields = status_fields(text, ("Uid", "VmRSS", "Cpus_allowed_list", "Missing"))
    assert fields == {"Uid": "1000\t1000\t0\t0", "VmRSS": "2048 kB", "Cpus_allowed_list": "0-3"}
    assert parse_uid(fields["Uid"]) == 1000 and parse_uid("") is None and parse_uid("x") is None
    assert parse_kb(fields["VmRSS"]) == 2048 * 1024 and parse_kb("12 MB") is None and parse_kb(None) is None


@pytest.mark.parametrize("page_kb, huge, expect", [(4, 0, 4096), (2048, 1, 2 << 20), (64, 0, 65536),
                                                    (0, 0, 4096), (0, 1, 1 << 30)])
def test_page_size_rule(page_kb, huge, expect):
    assert page_bytes(page_kb, huge, 4096, 1 << 30) == expect


def test_bytes_by_node_and_unknown_huge_pages():
    counts = [(4, 0, 0, 10), (2048, 1, 1, 3), (0, 1, 0, 2), (0, 0, 1, 5)]
    assert bytes_by_node(counts, 4096, None) == ({0: 40960, 1: 3 * (2 << 20) + 5 * 4096}, 2)
    assert bytes_by_node(counts, 4096, 2 << 20)[0][0] == 40960 + 2 * (2 << 20)


def test_names_and_command_lines():
    assert full_name("averyveryverylo", ["/x/averyveryverylongname"]) == "averyveryverylongname"
    assert full_name("averyveryverylo", ["/x/other"]) == "averyveryverylo"
    assert full_name("short", ["/x/shortened"]) == "short"
    assert parse_cmdline("a\0b c\0") == ["a", "b c"]
    assert parse_cmdline("nginx: worker process") == ["nginx:", "worker", "process"]
    assert parse_cmdline("") == []


@pytest.mark.parametrize("word, mode, nodes, flags", [
    ("default", "default", "", ()), ("bind:0-1", "bind", "0-1", ()), ("interleave=static:1", "interleave", "1",
                                                                       ("static",)),
    ("prefer (many):0,2", "preferred-many", "0,2", ()), ("weighted interleave:0-1", "weighted-interleave", "0-1", ()),
    ("bind=static|balancing:0", "bind", "0", ("static", "numa-balancing")), ("local", "local", "", ()),
])
def test_policy_words(word, mode, nodes, flags):
    pol = parse_policy_word(word)
    assert (pol.mode, pol.nodes, pol.flags) == (mode, CPUSet.parse(nodes), flags)


@pytest.mark.parametrize("word", ["", "bogus", "bind:0 extra", "bind:x"])
def test_bad_policy_words(word):
    with pytest.raises(ValueError):
        parse_policy_word(word)


def test_selector():
    ident = Identity(5, "postgres", "pg", 70, ("postgres",))
    assert Selector().accepts(ident)
    assert Selector(name="^post").accepts(ident) and not Selector(name="^gres").accepts(ident)
    assert Selector(user="pg").accepts(ident) and Selector(user="70").accepts(ident)
    assert not Selector(name="post", user="root").accepts(ident)
    with pytest.raises(InputError):
        Selector(name="[")
