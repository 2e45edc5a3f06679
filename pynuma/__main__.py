"""``python -m pynuma``: the same as the ``pynuma`` command."""
from pynuma.cli import run

run()
