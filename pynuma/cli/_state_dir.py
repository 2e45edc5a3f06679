"""``pynuma state check DIR``: do a state directory's checkpoint files agree with each other and the ledger?

Reports, without writing anything: files behind the ledger (a writer killed
between its commit and its file writes), files missing, temp files a killed
writer left, and ``cpu_manager_state`` / ``memory_manager_state`` that name
different pods.  ``--fix`` rewrites the files from the ledger and removes
stale temps (``--dry-run``: say what it would do).  Exit 0 when everything
agrees (or was fixed), 1 otherwise.
"""
from __future__ import annotations

import os
from typing import List

from ._common import print_json


def _read(path: str, findings: list):
    """The file's text (``None`` when missing or unreadable, which becomes a finding)."""
    from ..inputfile import read_capped
    from ..ledger.checkpoints import Finding

    try:
        return read_capped(path).decode("utf-8", "surrogateescape")  # never blocks, never reads unbounded
    except FileNotFoundError:
        return None
    except OSError as err:
        if not any(f.file == os.path.basename(path) for f in findings):
            findings.append(Finding(os.path.basename(path), "unreadable", f"{path}: {err.strerror or err}"))
        return None


def check_dir(args) -> int:
    from ..ledger import checkpoints as ck
    from ._ledger import ledger_path

    directory = args.file
    db = ledger_path(directory)
    findings: List[ck.Finding] = []
    fixed: List[str] = []
    ledger_file = db if os.path.exists(db) else None
    if ledger_file:
        from ..ledger.store import Ledger

        with Ledger(db, repair=False) as ledger:
            findings += ledger.check_checkpoints()
            if args.fix and findings and not args.dry_run:
                fixed = ledger.sync_checkpoints()
    else:
        findings += [ck.Finding(os.path.basename(t), "stale-temp", "temp file left by a killed writer")
                     for t in ck.stale_temps(directory)]
        if args.fix and not args.dry_run:
            for t in ck.stale_temps(directory):
                os.unlink(t)
                fixed.append(os.path.basename(t))
    cpu_text = _read(os.path.join(directory, ck.CPU_FILE), findings)
    mem_text = _read(os.path.join(directory, ck.MEMORY_FILE), findings)
    findings += ck.cross_check(cpu_text, mem_text)
    ok = not findings or (args.fix and not args.dry_run and bool(ledger_file or fixed)
                          and not any(f.problem in ("corrupt",) for f in findings)
                          and all(f.problem != "unreadable" or ledger_file for f in findings))
    if args.json:
        print_json({"dir": directory, "ledger": ledger_file, "ok": not findings,
                    "findings": [f.to_json() for f in findings], "fixed": fixed})
    elif not findings:
        print(f"{directory}: OK ({'files agree with the ledger' if ledger_file else 'no ledger; files agree'})")
    else:
        print(f"{directory}: {len(findings)} problem(s)")
        for f in findings:
            print(f"  {f.file}: {f.problem}: {f.detail}")
        if fixed:
            print("fixed: " + ", ".join(fixed))
        elif args.fix and args.dry_run:
            print("dry run: nothing written")
    return 0 if ok else 1
