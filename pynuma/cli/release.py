"""``pynuma release POD_UID``: remove a pod from the node's ledger (its CPUs, memory and devices are freed).

    pynuma release 1234-abcd --state-dir /var/lib/pynuma [--json]

The kubelet checkpoint files beside the ledger are rewritten in the same
locked step.  Exit 1 when the pod is not in the ledger.
"""
from __future__ import annotations

from . import _ledger as L
from ._common import add_json, parser, print_json


def main(argv) -> int:
    p = parser("release", "Remove a pod from the node's ledger and free what it holds.")
    p.add_argument("uid", metavar="POD_UID")
    L.add_state_dir(p)
    add_json(p)
    args = p.parse_args(argv)
    with L.open_ledger(L.state_dir_or_fail(args)) as ledger:
        entry = ledger.release(args.uid)
    if args.json:
        print_json({"released": entry.to_json()})
    else:
        print(f"released {entry.namespace}/{entry.name} ({entry.uid})")
    return 0
