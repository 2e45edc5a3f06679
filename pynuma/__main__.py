"""``python -m pynuma`` (and ``bin/pynuma``): the code that owns the process.

Only here may pynuma act on the process as a whole: this is where a reader
that went away (``pynuma topology | head``) is told apart from a failure.
The library and :func:`pynuma.cli.main` never do such things.
"""
import sys


def launch() -> "None":
    """Run ``sys.argv[1:]`` as a pynuma command line and end the process with its exit code."""
    from pynuma.cli import main

    try:
        code = main()
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


if __name__ == "__main__":
    launch()
