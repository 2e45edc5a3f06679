"""Is a directory a machine's root: a dump (or ``/``) with the sysfs CPU tree discovery reads."""
import os

from .errors import InputError
from .fsroot import FsRoot

#: every Linux with sysfs has it; a dump without it is not a dump of a machine
CPU_DIR = "sys/devices/system/cpu"


def require_machine_root(fs: "FsRoot") -> None:
    """``InputError`` (exit 2) when a ``--root`` other than ``/`` lacks ``sys/devices/system/cpu``.

    Without the check an empty folder, or the folder one level above an
    extracted dump, reads as a machine with no CPUs and no memory.  The
    error names what is missing and, when exactly one subdirectory is a
    root, that subdirectory.
    """
    if fs.is_host or fs.isdir(CPU_DIR):
        return
    hint = ""
    candidates = [name for name in _subdirectories(fs.root)
                  if os.path.isdir(os.path.join(fs.root, name, CPU_DIR))]
    if len(candidates) == 1:
        hint = f"; did you mean --root {os.path.join(fs.root, candidates[0])}?"
    elif candidates:
        hint = f"; {len(candidates)} subdirectories are roots: {', '.join(candidates[:4])}"
    raise InputError(f"{fs.root}: not a machine's root (no {CPU_DIR}){hint}")


def _subdirectories(path: str) -> list:
    """Up to 64 subdirectory names of ``path`` (a bounded look, for the hint only)."""
    try:
        with os.scandir(path) as entries:
            names = []
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    names.append(entry.name)
                    if len(names) >= 64:
                        break
            return sorted(names)
    except OSError:
        return []
