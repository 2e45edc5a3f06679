"""``python -m pynuma``: the same as the ``pynuma`` command."""
import sys

from pynuma.cli import main

sys.exit(main())
