"""The human form of a ``pynuma state check`` that found problems (both checkpoint kinds)."""
from __future__ import annotations

from typing import Iterable, Optional


def print_problems(path: str, kubelet_error: Optional[str], findings: Iterable[str], unfixable: Iterable[str],
                   changes_header: str, changes: Iterable[str], new_text: Optional[str], dry_run: bool) -> None:
    """Why the kubelet would refuse the file, each finding, and the fix written (or, dry run, to write).

    ``new_text`` is None when nothing is to be written; the changes are
    listed under ``changes_header`` only when it is not.
    """
    if kubelet_error:
        print(f"kubelet would refuse to start: {kubelet_error}")
    for f in findings:
        print(f"- {f}")
    for u in unfixable:
        print(f"cannot fix: {u}")
    if new_text is None:
        return
    print(changes_header)
    for line in changes:
        print(f"  {line}")
    if dry_run:
        print("would write:")
        print(new_text)
    else:
        print(f"wrote {path}")
