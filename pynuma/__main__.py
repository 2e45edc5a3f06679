"""``python -m pynuma`` (and ``bin/pynuma``): the code that owns the process.

Only here may pynuma act on the process as a whole: this is where a reader
that went away (``pynuma topology | head``) is told apart from a failure.
The library and :func:`pynuma.cli.main` never do such things.
"""
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable


#: allocations between two young-generation collections in a process the launcher owns
YOUNG_GENERATION_THRESHOLD = 20_000


def launch() -> "None":
    """Run ``sys.argv[1:]`` as a pynuma command line and end the process with its exit code."""
    import gc

    # The process is ours.  A command's start-up creates thousands of objects that live as long as
    # it does (modules, functions, classes); at the default young-generation threshold (700) the
    # collector walks them again and again for nothing (~2-3 ms of a short command).  A larger
    # threshold leaves short commands uncollected and still collects in a long-running one.
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_GENERATION_THRESHOLD:
        gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *older)
    from pynuma.cli import main

    try:
        code = main(owns_process=True)  # only here may a command handle signals itself
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        # nothing is left to say; stdout points at /dev/null so the interpreter's final flush cannot fail again
        import os

        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        code = 0
    sys.exit(code)


def handle_stop_signals(stop) -> "Callable[[], None]":
    """SIGTERM and SIGINT call ``stop()`` instead of ending the process; returns the undo.

    For a long-running command (``pynuma agent``) started by :func:`launch`,
    and only then (it asks :func:`pynuma.cli.owns_process` first): the
    handlers are the launcher's, never installed behind an embedder's back.
    """
    import signal

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda signum, frame: stop())

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return restore


if __name__ == "__main__":
    launch()
