"""``python -m pynuma`` (and ``bin/pynuma``): the code that owns the process.

Only here may pynuma act on the process as a whole: this is where a reader
that went away (``pynuma topology | head``) is told apart from a failure,
the collector is tuned for a short command, and a command that leaves
nothing behind ends without the interpreter's teardown.
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
    if sys.stdout is None or sys.stderr is None:
        _discard_closed_streams()
    from pynuma.cli import main

    try:
        try:
            code = main(owns_process=True)  # only here may a command handle signals itself
        except KeyboardInterrupt:  # Ctrl-C: the shell's convention
            code = 130
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        # the reader went away (``pynuma topology | head``): nothing is left to say
        _unwritable_output_to_devnull()
        code = 0
    except OSError as err:
        # the output could not be written (a full disk, an I/O error) after the command's own error
        # handling: an operational failure, told in one line
        _unwritable_output_to_devnull()
        try:
            sys.stderr.write(f"pynuma: error: cannot write the output: {err.strerror or err}\n")
            sys.stderr.flush()
        except OSError:
            pass  # stderr is the stream that failed: the exit code alone says it
        code = 1
    if _nothing_to_tear_down(sys.argv[1] if len(sys.argv) > 1 else ""):
        import os

        os._exit(code)
    sys.exit(code)


def _unwritable_output_to_devnull() -> None:
    """Point the standard streams' fds at /dev/null, so what is still buffered in them cannot fail
    again at the interpreter's final flush ("Exception ignored ...")."""
    import os

    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                fd = stream.fileno()
            except (AttributeError, OSError, ValueError):
                continue  # not backed by an fd (replaced by the caller): nothing to redirect
            if stream is sys.stderr:
                # stderr keeps its fd while it still works: the one-line error goes there
                try:
                    stream.flush()
                    continue
                except OSError:
                    pass
            os.dup2(null, fd)
    finally:
        os.close(null)


def _discard_closed_streams() -> None:
    """Give a standard stream closed before the start (``pynuma topology --save F >&-``; Python
    then sets it to ``None``) a sink that discards, as printing to it does: commands write to it."""
    import os

    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")


def _nothing_to_tear_down(command: str) -> bool:
    """Whether ending the process now, without the interpreter's teardown, loses nothing.

    True after a command that closes every file it opens
    (:data:`pynuma.cli.CLOSE_EVERY_FILE`; its output is flushed above), when
    no atexit callback is registered and no other thread runs.  Teardown
    would then only free memory: every module, class and object one by one,
    which costs a short command 3-8 ms on a small VM.
    """
    from pynuma.cli import CLOSE_EVERY_FILE

    if command not in CLOSE_EVERY_FILE:
        return False
    import atexit

    callbacks = getattr(atexit, "_ncallbacks", None)  # CPython's; elsewhere assume one waits
    if callbacks is None or callbacks():
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


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
