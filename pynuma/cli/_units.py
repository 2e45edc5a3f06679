"""The one human format for sizes in every command's text output.

Binary units (``B``, ``KiB`` ... ``EiB``) in the largest unit the value
reaches; one decimal below 100 of that unit (none when whole), none from
100 up: ``512 B``, ``1 KiB``, ``1.5 GiB``, ``3.9 GiB``, ``250 MiB``.
Kubernetes quantities (``1Gi``, ``280840Ki``) stay for ``--json`` and for
values shown exactly as the kubelet or the user wrote them (thresholds,
resource names such as ``hugepages-2Mi``).

Imported by ``pynuma topology``, which keeps its start-up light: no imports here.

>>> [human_bytes(n) for n in (0, 1023, 1024, 1536, 4 << 30, 250 << 20, None)]
['0 B', '1023 B', '1 KiB', '1.5 KiB', '4 GiB', '250 MiB', '-']
"""

_UNITS = (("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10))


def human_bytes(n, unknown: str = "-") -> str:
    """``n`` bytes in binary units (``unknown`` for ``None``); negative values keep their sign."""
    if n is None:
        return unknown
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, shift in _UNITS:
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{sign}{value:.0f} {unit}" if value >= 100 or value == int(value) else f"{sign}{value:.1f} {unit}"
    return f"{sign}{int(n)} B"
