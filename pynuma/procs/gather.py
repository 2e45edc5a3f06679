"""Build each process's :class:`ProcessPlacement` from what the reader returned.

One :class:`Gatherer` per listing holds what every process shares: the
node map, page sizes, and memos of affinity texts (most processes allow
the same CPUs, so each distinct text is parsed once).
"""
from __future__ import annotations

import errno
import os
from typing import Dict, List, Optional, Tuple

from ..bind.mempolicy import MemPolicy
from ..bind.procview import parse_policy_word
from ..cpuset import CPUSet
from ..fsroot import FsRoot
from .model import ProcessPlacement, frozen_mapping
from .nodes import NodeCpus
from .parse import Stat, bytes_by_node, cpuset_or_none, parse_kb
from .select import Identity

STATUS_KEYS = ("Uid", "Cpus_allowed_list", "Mems_allowed_list", "VmRSS")
GONE = (-errno.ENOENT, -errno.ESRCH)
DENIED = (-errno.EACCES, -errno.EPERM)
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _page_size() -> int:
    return os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class Gatherer:
    """Turns one process's raw read into a placement (or says why not)."""

    def __init__(self, fs: FsRoot, nodes: NodeCpus, warnings: List[str]) -> None:
        self.fs = fs
        self.nodes = nodes
        self.base_page = _page_size()
        self._default_huge: Optional[int] = -1  # read when first needed: a kernel that prints kernelpagesize_kB never needs it
        self.warnings = warnings
        self._sets: Dict[str, Optional[CPUSet]] = {}
        self._policies: Dict[str, Optional[MemPolicy]] = {}
        self._warned: set = set()

    @property
    def default_huge(self) -> Optional[int]:
        """Bytes of the default hugepage size (``Hugepagesize`` of ``/proc/meminfo``); None when unknown."""
        if self._default_huge == -1:
            from ..hugepages.pools import parse_default_size_kb

            try:
                kb = parse_default_size_kb(self.fs.read_optional("/proc/meminfo") or "")
            except ValueError:
                kb = None
            self._default_huge = None if kb is None else kb * 1024
        return self._default_huge

    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(text)

    def cpuset(self, text) -> Optional[CPUSet]:
        if not isinstance(text, str):
            return None
        found = self._sets.get(text, False)
        if found is False:
            found = self._sets[text] = cpuset_or_none(text)
        return found

    def policy(self, words: List[Tuple[str, int]]) -> Optional[MemPolicy]:
        """The policy of most lines (ties: the first seen); None when no line stated one that parses."""
        best, most = None, 0
        for word, lines in words:
            if lines > most:
                best, most = word, lines
        if best is None:
            return None
        found = self._policies.get(best, False)
        if found is False:
            try:
                found = parse_policy_word(best)
            except ValueError:
                found = None
            self._policies[best] = found
        return found

    def placement(self, ident: Identity, st: Stat, fields: Dict[str, str], raw: tuple) -> Optional[ProcessPlacement]:
        """The placement of one process; None when it vanished while being read."""
        pid = ident.pid
        _, _, maps_rc, _, maps_bad, counts, words, threads_rc, threads = raw
        live = [t for t in threads if t[1] >= 0 or isinstance(t[2], str)]
        if maps_rc in GONE and threads_rc in GONE:
            return None
        allowed = 0
        running = 0
        for _, processor, text in live:
            cpus = self.cpuset(text)
            if cpus is not None:
                allowed |= cpus.bits
            if processor >= 0:
                running |= 1 << processor
        if not live:  # no task/ directory (an old dump): the process's own files
            cpus = self.cpuset(fields.get("Cpus_allowed_list"))
            allowed = cpus.bits if cpus is not None else 0
            running = 1 << st.processor if st.processor >= 0 else 0
        cpus_allowed, running_cpus = CPUSet.from_bits(allowed), CPUSet.from_bits(running)
        cpu_nodes = self.nodes.of(cpus_allowed)
        memory = self._memory(pid, maps_rc, maps_bad, counts, fields)
        total = sum(memory.values())
        remote = sum(b for n, b in memory.items() if n not in cpu_nodes) if cpu_nodes else 0
        if total and not cpu_nodes:
            self._warn_once(f"cpus{pid}", f"{self.fs.host_path(f'/proc/{pid}')}: allowed CPUs unknown; "
                                          "remote share not computed")
        rss = parse_kb(fields.get("VmRSS"))
        return ProcessPlacement(
            pid, ident.name, ident.user, ident.uid, ident.cmdline, st.kernel_thread, len(live) or st.threads,
            cpus_allowed, cpu_nodes, self.cpuset(fields.get("Mems_allowed_list")), running_cpus,
            self.nodes.of(running_cpus), frozen_mapping(memory), remote, remote / total if total else 0.0,
            self.policy(words), (st.utime + st.stime) / _CLK_TCK, rss)

    def _memory(self, pid: int, maps_rc: int, maps_bad: int, counts, fields: Dict[str, str]) -> Dict[int, int]:
        where = self.fs.host_path(f"/proc/{pid}/numa_maps")
        if maps_rc == -errno.EFBIG:
            self.warnings.append(f"{where}: larger than the reader's limit; memory counted up to it")
        elif maps_rc in GONE:
            # no numa_maps at all: a kernel without CONFIG_NUMA (one node), or a dump that left it out
            rss = parse_kb(fields.get("VmRSS"))
            node_ids = list(self.nodes.node_ids)
            if len(node_ids) == 1 and rss is not None:
                self._warn_once("nomaps1", f"{where}: missing; resident memory (VmRSS) counted on the only node")
                return {node_ids[0]: rss} if rss else {}
            self._warn_once("nomaps", f"{where}: missing; memory per node unknown")
            return {}
        elif maps_rc < 0:
            self.warnings.append(f"{where}: {os.strerror(-maps_rc)}; memory per node unknown")
            return {}
        if maps_bad:
            self.warnings.append(f"{where}: {maps_bad} line(s) not understood, skipped")
        needs_default = any(not kb and huge for kb, huge, _, _ in counts)
        memory, unknown = bytes_by_node(counts, self.base_page, self.default_huge if needs_default else None)
        if unknown:
            self.warnings.append(f"{where}: {unknown} huge page(s) of unknown size not counted")
        return memory
