"""Fuzz target: the ACPI SRAT table (``/sys/firmware/acpi/tables/SRAT``), native against pure."""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script (atheris): imports start at the project root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._oracle import acpi_table, fuzz_main, twins  # noqa: E402

NAME = "srat"

def check(data: bytes) -> None:
    for blob in (data, acpi_table(b"SRAT", data)):  # as found, and behind a header that verifies
        twins("acpi", "parse_srat", blob, errors=(ValueError,))


if __name__ == "__main__":
    fuzz_main(check, NAME)
