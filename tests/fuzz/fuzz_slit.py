"""Fuzz target: the ACPI SLIT table (``/sys/firmware/acpi/tables/SLIT``), native against pure."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import acpi_table, fuzz_main, twins  # noqa: E402

NAME = "slit"

def check(data: bytes) -> None:
    for blob in (data, acpi_table(b"SLIT", data)):  # as found, and behind a header that verifies
        out = twins("acpi", "parse_slit", blob, errors=(ValueError,))
        if out[0] == "ok":
            twins("acpi", "slit_is_valid", out[1], errors=())


if __name__ == "__main__":
    fuzz_main(check, NAME)
