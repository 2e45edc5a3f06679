"""The one error contract of pynuma.

Every failure a caller can act on is a :class:`PynumaError`.  Each class
carries the CLI exit status it maps to: 2 for bad input or usage (the user
can fix the command or the file), 1 for operational failures (the machine
said no).  Messages name the file, argument or syscall involved.
"""
import errno as _errno


class PynumaError(Exception):
    """Base class of every error pynuma raises on purpose."""

    exit_code = 1


class InputError(PynumaError, ValueError):
    """Bad input: an argument, a manifest, a quantity, a file's content."""

    exit_code = 2


class ParseError(InputError):
    """A file under the root, or a given file, holds text that does not parse.

    ``path`` names the file; ``reason`` says what was wrong with it.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class TopologyError(PynumaError):
    """The machine's topology cannot be read or is inconsistent beyond repair."""

    exit_code = 2


class CheckpointError(PynumaError):
    """A state/checkpoint file is corrupt, mismatched or unreadable (never reset silently)."""

    exit_code = 1


class ChecksumMismatch(CheckpointError):
    """A checkpoint's stored checksum is not the one its content hashes to.

    The message stays the kubelet's (``checkpoint is corrupted``); ``detail``
    gives both checksums, and the CLI appends it to the one error line.
    """

    def __init__(self, message: str, stored: int, computed: int) -> None:
        super().__init__(message)
        self.stored = stored
        self.computed = computed
        self.detail = f"checksum in the file {stored}, computed from its content {computed}"


def details(err: "BaseException") -> str:
    """`` (detail)`` of ``err`` or, failing that, of the latest error it was raised while handling; else ``""``."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        detail = getattr(err, "detail", None)
        if detail:
            return f" ({detail})"
        err = err.__cause__ or err.__context__
    return ""


class AllocationError(PynumaError):
    """A placement request cannot be satisfied (not enough CPUs, memory, pages...)."""

    exit_code = 1


class AccessDenied(PynumaError, PermissionError):
    """The operation needs privileges the caller lacks."""

    exit_code = 1


class NoSuchProcess(PynumaError, ProcessLookupError):
    """The target process or thread does not exist (any more)."""

    exit_code = 1


class Unsupported(PynumaError):
    """The kernel, the root or the build does not support the operation."""

    exit_code = 1


class FakeRootRefused(Unsupported):
    """A live-host side effect was asked for while reading an alternate root."""


def from_oserror(err: "OSError", what: str) -> "PynumaError":
    """Map an :class:`OSError` from a syscall or file access to a pynuma error naming ``what``."""
    code = err.errno
    text = f"{what}: {err.strerror or _errno.errorcode.get(code or 0, 'error')}"
    if code in (_errno.EPERM, _errno.EACCES):
        return AccessDenied(text)
    if code == _errno.ESRCH:
        return NoSuchProcess(text)
    if code in (_errno.ENOSYS, _errno.EOPNOTSUPP):
        return Unsupported(text)
    if code == _errno.EINVAL:
        return InputError(text)
    return PynumaError(text)
