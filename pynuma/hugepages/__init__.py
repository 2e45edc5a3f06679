"""Hugepage pools: read them per size and NUMA node, set them, and account for them.

* :mod:`pynuma.hugepages.pools` reads global and per-node pools and the default size;
* :mod:`pynuma.hugepages.cmdline` parses ``hugepagesz=``/``hugepages=``/``default_hugepagesz=``;
* :mod:`pynuma.hugepages.allocate` writes ``nr_hugepages`` and reports what the kernel gave;
* :mod:`pynuma.hugepages.resources` holds the Kubernetes ``hugepages-<size>`` rules;
* :mod:`pynuma.hugepages.accounting` refuses requests beyond the free pages (no overcommit).
"""
