"""``pynuma`` command line: one module per command, imported only when used.

Each command module exposes ``main(argv) -> int`` and builds its own
argparse parser with :func:`pynuma.cli._common.parser`.  Errors become one
line on stderr: exit 2 for bad input or usage, 1 for operational failures.
After a command of :data:`CLOSE_EVERY_FILE` the launcher, not :func:`main`,
ends the process without the interpreter's teardown (:mod:`pynuma.__main__`).
"""
import sys

from ._streams import stderr

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# name -> (module, one-line summary).  Keep the summaries short: they are the help.
COMMANDS = {
    "topology": ("pynuma.cli.topology", "CPUs, caches, NUMA nodes, memory, hugepages and distances"),
    "allocate": ("pynuma.cli.allocate", "pick CPUs as the kubelet's CPU Manager static policy would"),
    "hints": ("pynuma.cli.hints", "merge topology hints as the kubelet's Topology Manager would"),
    "admit": ("pynuma.cli.admit", "admit a pod: hints, merged affinity, CPUs and memory it would get"),
    "state": ("pynuma.cli.state", "show, check and fix kubelet cpu/memory manager checkpoint files"),
    "fit": ("pynuma.cli.fit", "would a pod fit this node now, and why not (scheduler and kubelet reasons)"),
    "ledger": ("pynuma.cli.ledger", "the node's resource ledger: show, init, assume, bind, forget, expire"),
    "release": ("pynuma.cli.release", "remove a pod from the node's ledger and free what it holds"),
    "hugepages": ("pynuma.cli.hugepages", "show or set hugepage pools per size and NUMA node"),
    "eviction": ("pynuma.cli.eviction", "eviction signals, thresholds, node conditions and ranked pods"),
    "allocatable": ("pynuma.cli.allocatable", "node allocatable from capacity, reservations and thresholds"),
    "qos": ("pynuma.cli.qos", "QoS class and OOM score adjustment of a pod's containers"),
    "cgroups": ("pynuma.cli.cgroups", "walk kubelet pod and container cgroups and their usage"),
    "run": ("pynuma.cli.run", "run a command with a CPU and memory placement (like numactl)"),
    "bind": ("pynuma.cli.bind", "change the CPU affinity of a running process, migrate its pages"),
    "show": ("pynuma.cli.show", "CPUs, memory nodes and memory policy of a process"),
    "procs": ("pynuma.cli.procs", "NUMA placement of processes: memory per node, remote share"),
    "bench": ("pynuma.cli.bench", "NUMA memory latency and bandwidth microbenchmarks"),
    "agent": ("pynuma.cli.agent", "run the node agent: status, Lease, eviction cycles, exports"),
    "export": ("pynuma.cli.export", "NodeResourceTopology object or Prometheus metrics of this node"),
    "apply": ("pynuma.cli.apply", "create or update a pod's cgroups with the kubelet's settings"),
    "evict": ("pynuma.cli.evict", "kill a pod's processes, remove its cgroups, report its status"),
    "oom-adjust": ("pynuma.cli.oom_adjust", "set a process's oom_score_adj (-1000..1000)"),
}

#: commands that close every file they open (with-blocks, the atomic writer) and print the rest
CLOSE_EVERY_FILE = frozenset({"topology", "hugepages", "eviction", "allocatable", "qos", "cgroups", "show", "state",
                              "run"})


def _usage() -> str:
    width = max(len(n) for n in COMMANDS)
    lines = ["usage: pynuma COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", "Run 'pynuma COMMAND --help' for a command's options."]
    return "\n".join(lines)


def main(argv=None, owns_process: bool = False) -> int:
    """Run one command line and return its exit code.

    Safe to embed: it never ends the process (a usage error or ``--help``
    returns 2 or 0), lets the caller's ``KeyboardInterrupt`` through, and
    leaves the caller's garbage collector, buffered files and ``finally``
    blocks as they were.
    ``owns_process`` is for the launcher alone (:func:`pynuma.__main__.launch`):
    only then may a command such as ``pynuma agent`` handle SIGTERM itself.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from .. import __version__
        from .._impl import native_available, native_in_use

        built = native_available()
        state = "built, in use" if built and native_in_use() else "built, not in use" if built else "not built"
        print(f"pynuma {__version__} (native core: {state})")
        return 0
    name = argv[0]
    entry = COMMANDS.get(name)
    if entry is None:
        print(f"pynuma: error: unknown command {name!r} (see 'pynuma --help')", file=stderr())
        return 2
    from .._impl import import_module

    try:
        module = import_module(entry[0])
    except ModuleNotFoundError as err:
        if err.name != entry[0]:
            raise
        print(f"pynuma {name}: error: this command is not available in this build", file=stderr())
        return 1
    common = sys.modules.get("pynuma.cli._common")  # loaded only by the commands that parse with it
    if common is not None:
        common.forget_running()
    global _owns_process
    _owns_process = owns_process
    try:
        return int(module.main(argv[1:]) or 0)
    except SystemExit as done:  # a command's --help, or its parser's usage error (already printed)
        return exit_code(done.code)
    except BrokenPipeError:
        return 0
    except Exception as err:
        # a PynumaError was defined by pynuma.errors, so that module is loaded when one is raised;
        # a command that raises none does not pay for importing it
        errors = sys.modules.get("pynuma.errors")
        common = sys.modules.get("pynuma.cli._common")
        prog = common.error_prog(name) if common is not None else f"pynuma {name}"
        if errors is not None and isinstance(err, errors.PynumaError):
            _say_error(prog, str(err) + errors.details(err))
            return err.exit_code
        if isinstance(err, OSError):
            # the machine said no (a directory that cannot be written, a file that went away):
            # an operational failure, told in one line naming the file
            where = f"{err.filename}: " if err.filename is not None else ""
            _say_error(prog, f"{where}{err.strerror or err}")
            return 1
        raise
    finally:
        _owns_process = False


def exit_code(code: object) -> int:
    """The exit code ``sys.exit(code)`` would give (a text is printed on stderr, and gives 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr())
    return 1


def _say_error(prog: str, message: str) -> None:
    """One line on stderr: names in ``message`` (paths, file content) may hold newlines or escapes."""
    from ._common import printable

    print(f"{prog}: error: {printable(message)}", file=stderr())


#: whether the command now running was started by a launcher that ends the process after it
_owns_process = False


def owns_process() -> bool:
    """Whether the running command owns the process (started by ``bin/pynuma`` / ``python -m pynuma``).

    Only then may a command change process-wide state such as signal
    handlers; called in-process through :func:`main`, it never does.
    """
    return _owns_process


def run(argv=None) -> "NoReturn":
    """Run the command line and raise ``SystemExit`` with its exit code.

    An ordinary exit: the caller's ``finally`` blocks, ``atexit`` callbacks
    and buffered files all run and flush.  The process owners
    (``bin/pynuma``, ``python -m pynuma``) use :func:`pynuma.__main__.launch`,
    which also quiets a reader that went away.
    """
    raise SystemExit(main(argv))


if __name__ == "__main__":  # pragma: no cover
    run()
