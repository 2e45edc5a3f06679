"""A plan: the exact cgroup writes an action makes, as a value (``--dry-run`` prints it).

>>> p = Plan((Step(MKDIR, "/sys/fs/cgroup/kubepods/podx"),
...           Step(WRITE, "/sys/fs/cgroup/kubepods/podx/cpu.weight", "4", current="100", why="cpu shares 102")))
>>> print(p.describe())
mkdir /sys/fs/cgroup/kubepods/podx
write /sys/fs/cgroup/kubepods/podx/cpu.weight 4  (now 100; cpu shares 102)

Steps that would change nothing (the directory exists, the file already
holds the value) stay in the plan with ``changed=False`` so a report can
show them, but are never executed: applying a plan twice writes nothing
the second time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from ..errors import PynumaError

MKDIR, WRITE, RMDIR = "mkdir", "write", "rmdir"


class PreconditionError(PynumaError):
    """A cgroup write cannot work here; the message names the file and the missing capability."""

    exit_code = 1

    def __init__(self, path: str, missing: str) -> None:
        super().__init__(f"{path}: {missing}")
        self.path = path
        self.missing = missing


@dataclass(frozen=True)
class Step:
    """One filesystem change: ``mkdir`` / ``rmdir`` a cgroup, or ``write`` a value to a file.

    ``path`` is root-relative; ``current`` is what the file held when the
    plan was made (None: missing or unread); ``changed`` is False when the
    step would change nothing.
    """

    action: str
    path: str
    value: Optional[str] = None
    current: Optional[str] = None
    changed: bool = True
    why: str = ""

    def describe(self, root_prefix: str = "") -> str:
        where = root_prefix + self.path
        if self.action != WRITE:
            text = f"{self.action} {where}"
            return text if self.changed else text + "  (already done)"
        text = f"write {where} {self.value}"
        notes = []
        if not self.changed:
            notes.append("unchanged")
        elif self.current is not None:
            notes.append(f"now {self.current.strip() or 'empty'}")
        if self.why:
            notes.append(self.why)
        return text + (f"  ({'; '.join(notes)})" if notes else "")

    def to_dict(self) -> dict:
        return {"action": self.action, "path": self.path, "value": self.value,
                "current": None if self.current is None else self.current.strip(),
                "changed": self.changed, "why": self.why}


@dataclass(frozen=True)
class Plan:
    """Ordered steps plus notes (things deliberately left alone, and why)."""

    steps: Tuple[Step, ...] = ()
    notes: Tuple[str, ...] = ()
    root: str = "/"

    def __add__(self, other: "Plan") -> "Plan":
        return Plan(self.steps + other.steps, self.notes + other.notes, self.root)

    @property
    def changes(self) -> Tuple[Step, ...]:
        """The steps that would change something."""
        return tuple(s for s in self.steps if s.changed)

    def _prefix(self) -> str:
        return "" if self.root == "/" else self.root.rstrip("/")

    def describe(self, include_unchanged: bool = True) -> str:
        """One line per step, then the notes."""
        prefix = self._prefix()
        lines = [s.describe(prefix) for s in self.steps if include_unchanged or s.changed]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"root": self.root, "steps": [s.to_dict() for s in self.steps], "notes": list(self.notes),
                "changes": len(self.changes)}
