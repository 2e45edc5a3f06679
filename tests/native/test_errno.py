"""One error contract: C's -errno becomes the matching OSError subclass naming the
path, and FsRoot turns it into the pynuma error naming the host file."""
from __future__ import annotations

import errno
import os

import pytest

from pynuma import errors
from pynuma.fsroot import FsRoot


@pytest.fixture
def root(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("1\n")
    os.symlink("loop", tmp_path / "loop")
    return tmp_path


@pytest.mark.parametrize("path, exc, code", [
    ("nope", FileNotFoundError, errno.ENOENT),
    ("file/x", NotADirectoryError, errno.ENOTDIR),
    ("dir", IsADirectoryError, errno.EISDIR),
    ("loop", OSError, errno.ELOOP),
    ("x" * 300, OSError, errno.ENAMETOOLONG),
])
def test_read_errno_mapping(backend, root, path, exc, code):
    mod = backend("fsread")
    fd = mod.open_root(str(root))
    try:
        with pytest.raises(exc) as info:
            mod.read_at(fd, path)
        err = info.value
        assert type(err) is exc
        assert err.errno == code
        assert err.strerror == os.strerror(code)
        assert err.filename == path
    finally:
        mod.close_root(fd)


def test_list_and_write_errno(backend, root):
    mod = backend("fsread")
    fd = mod.open_root(str(root))
    try:
        with pytest.raises(NotADirectoryError):
            mod.list_at(fd, "file")
        with pytest.raises(IsADirectoryError):
            mod.write_at(fd, "dir", b"1")
        with pytest.raises(FileNotFoundError) as info:
            mod.write_at(fd, "dir/new", b"1")
        assert info.value.filename == "dir/new"
    finally:
        mod.close_root(fd)


def test_open_root_errors(backend, root):
    mod = backend("fsread")
    with pytest.raises(NotADirectoryError):
        mod.open_root(str(root / "file"))
    with pytest.raises(FileNotFoundError) as info:
        mod.open_root(str(root / "none"))
    assert info.value.filename == str(root / "none")


def test_fsroot_names_the_host_file(root):
    fs = FsRoot(str(root))
    with pytest.raises(errors.PynumaError) as info:
        fs.read_required("/sys/nothing")
    assert str(root / "sys/nothing") in str(info.value)
    with pytest.raises(errors.PynumaError) as info:  # EISDIR, for root and everyone else alike
        fs.write_text("/dir", "1")
    assert str(root / "dir") in str(info.value)
    if os.geteuid() != 0:  # root writes a read-only file anyway
        (root / "file").chmod(0o444)
        with pytest.raises(errors.AccessDenied) as info:
            fs.write_text("/file", "2")
        assert str(root / "file") in str(info.value)
        (root / "file").chmod(0o644)
    assert fs.read_optional("/loop") is None
    assert fs.read_many(["/file", "/nope"]) == ["1\n", None]
