"""``pynuma evict POD_UID``: kill a pod's processes, remove its cgroups, print the status the kubelet records."""
from __future__ import annotations

from typing import List


def main(argv: List[str]) -> int:
    from ._actuate import add_target, open_target
    from ._common import add_json, parser, print_json

    p = parser("evict", "End a pod's processes (cgroup.kill on v2, SIGKILL on v1) and remove its cgroups.")
    p.add_argument("uid", metavar="POD_UID", help="the pod's uid (metadata.uid), as in its cgroup's name")
    add_target(p)
    p.add_argument("--dry-run", action="store_true", help="say what would be killed and removed, do nothing")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long to wait for the cgroups to empty (default 10)")
    p.add_argument("--keep-cgroup", action="store_true", help="leave the emptied cgroups in place")
    p.add_argument("--reason", default="Evicted", help="status reason to record (default Evicted)")
    p.add_argument("--message", default="", help="status message to record")
    add_json(p)
    args = p.parse_args(argv)

    from ..apply.evict import evict_pod
    from ..errors import InputError, PynumaError
    from ..fsroot import FsRoot

    if not args.timeout > 0 or args.timeout > 3600:
        raise InputError(f"--timeout {args.timeout}: expected seconds in (0, 3600]")
    from ..apply.tree import NoKubepods

    with FsRoot(args.root) as fs:
        try:
            tree = open_target(fs, args, args.dry_run)
        except NoKubepods as err:  # nothing to create here: there is simply no pod
            raise PynumaError(f"no cgroup of pod {args.uid}: {err.reason}") from None
        if tree.find_pod(args.uid) is None:
            raise PynumaError(f"no cgroup of pod {args.uid} under {fs.host_path(tree.dir('memory', tree.kubepods))}")
        outcome = evict_pod(tree, args.uid, args.reason, args.message, dry_run=args.dry_run,
                            timeout=args.timeout, remove=not args.keep_cgroup)
    if args.json:
        print_json(outcome.to_dict())
    elif args.dry_run:
        print("\n".join(outcome.plan) or "nothing to do")
    else:
        print(f"pod {args.uid}: {'evicted' if outcome.evicted else 'NOT evicted'} by {outcome.method} "
              f"in {outcome.seconds:.3f}s; signalled {len(outcome.signalled)} process(es)"
              + ("; cgroups removed" if outcome.removed else ""))
        if outcome.remaining:
            print(f"still running: {', '.join(map(str, outcome.remaining))}")
        if outcome.status:
            print(f"status: phase {outcome.status['phase']}, reason {outcome.status['reason']}, "
                  f"message {outcome.status['message']!r}")
    if not args.dry_run and not outcome.evicted:
        return 1
    return 0
