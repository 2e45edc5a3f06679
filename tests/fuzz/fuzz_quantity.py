"""Fuzz target: Kubernetes quantities (``1Gi``, ``500m``, ``1e3``): parse, format, parse again.

What is printed reads back as the same amount, and its text stays short:
an amount is at most 2^63-1 in nano units, so formatting (like parsing)
takes time linear in the input, never in the size of the number it names.
"""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import fuzz_main, outcome, pynuma_error, text  # noqa: E402

NAME = "quantity"

MAX_TEXT = 48  # "-9223372036854775807999999999n" and its kin fit


def check(data: bytes) -> None:
    from pynuma.quantity import Quantity, format_quantity, parse_quantity

    out = outcome(parse_quantity, text(data), errors=pynuma_error())
    if out[0] != "ok":
        return
    q = out[1]
    for fmt in ("BinarySI", "DecimalSI", "DecimalExponent"):
        shown = format_quantity(q.amount, fmt)
        assert len(shown) <= MAX_TEXT, (data[:100], fmt, shown[:100])
        again = outcome(parse_quantity, shown, errors=pynuma_error())
        assert again[0] == "ok", (data[:100], fmt, shown, again)
        assert again[1].amount == q.amount, (data[:100], fmt, shown)  # amounts are whole nanos: exact
    assert Quantity.parse(str(q)) == q, (data[:100], str(q))
    q.value(), q.milli_value()


if __name__ == "__main__":
    fuzz_main(check, NAME)
