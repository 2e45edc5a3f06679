"""Where commands write: the standard streams, or a sink when the process has none."""
import sys


class _Discard:
    """The stream of a process that has none (``pythonw``; a stream closed before the start)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


_DISCARD = _Discard()


def stdout():
    """Where a command writes its output: ``sys.stdout``, or a sink that discards when there is none."""
    return sys.stdout if sys.stdout is not None else _DISCARD


def stderr():
    """Where a command writes its errors and warnings: ``sys.stderr``, or a sink that discards."""
    return sys.stderr if sys.stderr is not None else _DISCARD
