"""Read a per-group sysfs file set once per group, in few batched reads.

A group (package, die, cluster, cache instance) is described by the files of
its lowest CPU, whose mask names the other members -- hwloc's order: take
the lowest CPU not yet placed, read its files, place every CPU of its mask.
Done literally that is one read per group, one after the other.  Instead,
each round *predicts* the next leaders by tiling the first group's shape
over the remaining CPUs and reads all their files in one batch; a leader is
used only while it is still the lowest unplaced CPU, so the result is
exactly the one-by-one result, and a wrong guess only costs a few reads.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import Callable, List, Optional, Sequence, Tuple


def _lowest(bits: int) -> int:
    return (bits & -bits).bit_length() - 1


def predict(remaining: int, shape: int, shape_leader: int, limit: int) -> List[int]:
    """Likely leaders of the groups covering ``remaining``, if every group looks like ``shape``."""
    leaders = []
    left = remaining
    while left and len(leaders) < limit:
        cpu = _lowest(left)
        leaders.append(cpu)
        offset = cpu - shape_leader
        guess = (shape << offset) if offset >= 0 else (shape >> -offset)
        left &= ~(guess | (1 << cpu))
    return leaders


def walk(fs, remaining: int, paths_of: Callable[[int], Sequence[str]],
         place: Callable[[int, List[Optional[str]], int], Optional[int]],
         first: Optional[Tuple[int, Sequence[Optional[str]]]] = None) -> None:
    """Visit every group leader among ``remaining`` (bitmap), lowest first.

    ``paths_of(cpu)`` names a leader's files; ``place(cpu, texts, remaining)``
    handles one leader given the texts of those files and returns the bitmap
    of CPUs it placed (the leader at least), or ``None`` for the leader alone.
    ``first`` is ``(cpu, texts of paths_of(cpu))`` when the caller already read
    the lowest CPU's files (in a batch with other reads): round one uses them.
    """
    shape, shape_leader = 0, 0
    limit = 1  # the first round reads one leader, to learn the shape
    while remaining:
        leaders = predict(remaining, shape or 1, shape_leader, limit)
        if first is not None and first[0] == leaders[0]:
            leaders, texts, counts = leaders[:1], list(first[1]), [len(first[1])]
        else:
            paths: List[str] = []
            counts: List[int] = []
            for cpu in leaders:
                files = paths_of(cpu)
                counts.append(len(files))
                paths.extend(files)
            texts = fs.read_many(paths)
        first = None
        start = used = 0
        for cpu, count in zip(leaders, counts):
            if remaining & -remaining != 1 << cpu:
                break  # the guess went wrong here: re-predict from the true lowest CPU
            placed = place(cpu, texts[start:start + count], remaining)
            placed = (1 << cpu) if placed is None else placed | (1 << cpu)
            shape, shape_leader = placed, cpu  # the latest group shapes the next guesses
            remaining &= ~placed
            start += count
            used += 1
        # a miss means an irregular layout: keep the next batch small so wasted reads stay bounded
        limit = remaining.bit_length() + 1 if used == len(leaders) else max(4, 2 * used)


def members(mask: int, reported: int, remaining: int, cpu: int) -> int:
    """A leader's group: its mask limited to reported, still unplaced CPUs, plus itself."""
    return (mask & reported & remaining) | (1 << cpu)

