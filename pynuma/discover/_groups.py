"""Read a per-group sysfs file set once per group, in few batched reads.

A group (package, die, cluster, cache instance) is described by the files of
its lowest CPU, whose mask names the other members -- hwloc's order: take
the lowest CPU not yet placed, read its files, place every CPU of its mask.
This module holds that rule, for every kind of group and both paths.

Done literally that is one read per group, one after the other.  Instead,
each round *predicts* the next leaders by tiling the latest group's shape
over the remaining CPUs and reads all their files in one batch (one batch
for every kind of group walked together); a leader is used only while it is
still the lowest unplaced CPU, so the result is exactly the one-by-one
result, and a wrong guess only costs a few reads.
"""
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs more than discovery's start-up budget
    from typing import Callable, List, Optional, Sequence, Tuple


def predict(remaining: int, shape: int, shape_leader: int, limit: int) -> "List[int]":
    """Likely leaders of the groups covering ``remaining``, if every group looks like ``shape``."""
    leaders = []
    left = remaining
    while left and len(leaders) < limit:
        cpu = (left & -left).bit_length() - 1
        leaders.append(cpu)
        offset = cpu - shape_leader
        left &= ~((shape << offset if offset >= 0 else shape >> -offset) | (1 << cpu))
    return leaders


class Walk:
    """One kind of group to walk: its CPUs, where their files are, and what to do with a leader.

    A leader's files are ``prefix + str(cpu) + name`` for each of ``names()``
    (asked once per batch: a caller may read fewer files once it knows
    more).  ``place(cpu, texts, start, remaining)`` handles one leader given
    the texts of those files (``texts[start:start + len(names())]``) and
    returns the bitmap of CPUs it placed (the leader at least), or ``None``
    for the leader alone.  ``first`` is ``(cpu,
    texts)`` when the caller already read the lowest CPU's files (in a batch
    with other reads): round one uses them.  ``notes`` is the list ``place``
    adds its warnings to.
    """

    __slots__ = ("remaining", "prefix", "names", "place", "first", "notes", "shape", "shape_leader", "limit")

    def __init__(self, remaining: int, prefix: str, names: "Callable[[], Sequence[str]]",
                 place: "Callable[[int, List[Optional[str]], int, int], Optional[int]]",
                 first: "Optional[Tuple[int, Sequence[Optional[str]]]]", notes: "List[str]") -> None:
        self.remaining, self.prefix, self.names, self.place, self.first = remaining, prefix, names, place, first
        self.notes = notes
        self.shape, self.shape_leader = 1, 0
        self.limit = 1  # the first round reads one leader, to learn the shape


def walk(fs, walks: "Sequence[Walk]", warnings: "List[str]") -> None:
    """Visit every group leader of every walk, lowest first within each.

    The walks advance together: each round reads the predicted leaders'
    files of all unfinished walks in one batch.  Each walk's warnings are
    then added to ``warnings`` in walk order, as if walked one after another.
    """
    read_many = fs.read_many
    active = [w for w in walks if w.remaining]
    while active:
        rounds = []  # (walk, leaders, texts or None, width, offset in the batch)
        paths: List[str] = []
        for w in active:
            leaders = predict(w.remaining, w.shape, w.shape_leader, w.limit)
            first, w.first = w.first, None
            if first is not None and first[0] == leaders[0]:
                rounds.append((w, leaders[:1], list(first[1]), len(first[1]), 0))
                continue
            prefix, suffixes = w.prefix, w.names()
            rounds.append((w, leaders, None, len(suffixes), len(paths)))
            paths += [f"{prefix}{cpu}{name}" for cpu in leaders for name in suffixes]
        batch = read_many(paths) if paths else []
        for w, leaders, texts, width, offset in rounds:
            if texts is None:
                texts = batch
            remaining, place = w.remaining, w.place
            used = 0
            for cpu in leaders:
                bit = 1 << cpu
                if remaining & -remaining != bit:
                    break  # the guess went wrong here: re-predict from the true lowest CPU
                placed = place(cpu, texts, offset + used * width, remaining)
                placed = bit if placed is None else placed | bit
                w.shape, w.shape_leader = placed, cpu  # the latest group shapes the next guesses
                remaining &= ~placed
                used += 1
            w.remaining = remaining
            # a miss means an irregular layout: keep the next batch small so wasted reads stay bounded
            w.limit = remaining.bit_length() + 1 if used == len(leaders) else max(4, 2 * used)
        active = [w for w in active if w.remaining]
    for w in walks:
        warnings += w.notes


def members(mask: int, reported: int, remaining: int, cpu: int) -> int:
    """A leader's group: its mask limited to reported, still unplaced CPUs, plus itself."""
    return (mask & reported & remaining) | (1 << cpu)
