"""``pynuma oom-adjust PID VALUE``: set a process's ``oom_score_adj`` (-1000..1000)."""
from __future__ import annotations

from typing import List


def main(argv: List[str]) -> int:
    from ._common import add_json, parser, print_json

    p = parser("oom-adjust", "Set a live process's oom_score_adj (-1000 never OOM-killed .. 1000 first).")
    p.add_argument("pid", metavar="PID", help="process id")
    p.add_argument("value", metavar="VALUE", help="oom_score_adj, an integer from -1000 to 1000")
    p.add_argument("--dry-run", action="store_true", help="say what would be written, write nothing")
    add_json(p)
    args = p.parse_args(argv)

    from ..apply.oom import apply_oom_score_adj, validate
    from ..errors import InputError
    from ..fsroot import FsRoot
    from ..parse import parse_pid, shown

    try:
        pid = parse_pid(args.pid)
    except ValueError as err:
        raise InputError(f"PID {shown(args.pid)}: {err}") from None
    value = validate(args.value)
    with FsRoot("/") as fs:
        plan = apply_oom_score_adj(fs, [pid], value, dry_run=args.dry_run, why="pynuma oom-adjust")
    if args.json:
        print_json({"dry_run": args.dry_run, **plan.to_dict()})
        return 0
    step = plan.steps[0]
    if not step.changed:
        print(f"pid {args.pid}: oom_score_adj is already {value}")
    elif args.dry_run:
        print(step.describe())
    else:
        print(f"pid {args.pid}: oom_score_adj {(step.current or '?').strip()} -> {value}")
    return 0
