"""Every read path refuses what is not a regular file, never blocks, and never reads a shorter path.

Read paths: the native reader through openat2, the native component walk (a
kernel without openat2) and the pure twin; each entry point (read_at,
read_many, read_many_text, write_at, list_at, kind_at).  A FIFO
must not hang (a per-test alarm fails the test instead of hanging CI), a
device must not be read, a NUL in a path must not be silently cut off, and a
symlink to ``file/`` must be ENOTDIR everywhere (as openat2 and POSIX say).
"""
from __future__ import annotations

import errno
import os
import signal
import socket

import pytest

from pynuma import _impl

IMPLS = _impl.implementations("fsread")


@pytest.fixture(params=["native", "native-walk", "pure"])
def reader(request):
    kind = request.param
    if kind != "pure" and "native" not in IMPLS:
        if os.environ.get("PYNUMA_REQUIRE_NATIVE") == "1":
            pytest.fail("native fsread not built")
        pytest.skip("native fsread not built")
    mod = IMPLS["pure" if kind == "pure" else "native"]
    if kind == "native-walk":
        mod._walk_only(True)
    yield mod
    if kind == "native-walk":
        mod._walk_only(False)


@pytest.fixture(autouse=True)
def no_hang():
    """Fail (SIGALRM) rather than hang when a read blocks."""
    def expire(*_):
        raise TimeoutError("a read blocked")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "root"
    (r / "d").mkdir(parents=True)
    (r / "file").write_text("hello\n")
    os.mkfifo(r / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(r / "sock"))
    os.mknod(r / "zero", 0o600 | 0o020000, os.makedev(1, 5))  # a /dev/zero of its own
    os.symlink("/dev/zero", r / "devzero")  # re-based on the root: missing, not the host's device
    os.symlink("file/", r / "slash")
    os.symlink("file/.", r / "slashdot")
    os.symlink("slash", r / "via_slash")
    os.symlink("d/", r / "dir_slash")
    (r / "d" / "inner").write_text("in\n")
    yield r
    sock.close()


SPECIAL = ["fifo", "sock", "zero"]


@pytest.mark.parametrize("name", SPECIAL)
def test_special_files_are_refused_by_read_at(reader, root, name):
    fd = reader.open_root(str(root))
    try:
        with pytest.raises(OSError) as info:
            reader.read_at(fd, name)
        assert info.value.errno == errno.ENXIO
        assert "not a regular file" in info.value.strerror
        assert info.value.filename == name
    finally:
        reader.close_root(fd)


def test_read_many_gives_enxio_and_reads_the_rest(reader, root):
    fd = reader.open_root(str(root))
    try:
        got = reader.read_many(fd, ["fifo", "file", "sock", "zero", "d", "devzero"])
        assert got == [-errno.ENXIO, b"hello\n", -errno.ENXIO, -errno.ENXIO, -errno.EISDIR, -errno.ENOENT]
        assert reader.read_many_text(fd, ["fifo", "/file"]) == [None, "hello\n"]
    finally:
        reader.close_root(fd)


@pytest.mark.parametrize("name", SPECIAL)
def test_write_at_refuses_special_files(reader, root, name):
    fd = reader.open_root(str(root))
    try:
        with pytest.raises(OSError) as info:
            reader.write_at(fd, name, b"1")
        assert info.value.errno == errno.ENXIO
    finally:
        reader.close_root(fd)
    assert (root / "file").read_text() == "hello\n"


@pytest.mark.parametrize("name", ["fifo", "sock", "zero", "file"])
def test_list_at_refuses_non_directories(reader, root, name):
    fd = reader.open_root(str(root))
    try:
        with pytest.raises(NotADirectoryError):
            reader.list_at(fd, name)
        assert reader.list_names(fd, name) == -errno.ENOTDIR
    finally:
        reader.close_root(fd)


@pytest.mark.parametrize("name", ["slash", "slashdot", "via_slash"])
def test_symlink_to_file_slash_is_enotdir(reader, root, name):
    fd = reader.open_root(str(root))
    try:
        with pytest.raises(NotADirectoryError):
            reader.read_at(fd, name)
        assert reader.read_many(fd, [name]) == [-errno.ENOTDIR]
        assert reader.kind_at(fd, name) == 0
        assert reader.read_at(fd, "dir_slash/inner") == b"in\n"  # a slash on a directory is fine
        assert reader.kind_at(fd, "dir_slash") == 2
        assert reader.read_at(fd, "file") == b"hello\n"
    finally:
        reader.close_root(fd)


@pytest.mark.parametrize("path", ["file\0/etc/passwd", "d/inner\0", "\0file"])
def test_nul_in_a_path_is_an_error_never_a_shorter_path(reader, root, path):
    fd = reader.open_root(str(root))
    try:
        with pytest.raises(OSError) as info:
            reader.read_at(fd, path)
        assert info.value.errno == errno.EINVAL and "NUL" in info.value.strerror
        assert reader.read_many(fd, [path, "file"]) == [-errno.EINVAL, b"hello\n"]
        assert reader.read_many_text(fd, ["file", path]) == ["hello\n", None]
        assert reader.list_names(fd, path) == -errno.EINVAL
        assert reader.kind_at(fd, path) == 0
        with pytest.raises(OSError):
            reader.write_at(fd, path, b"x")
        with pytest.raises(OSError):
            reader.list_at(fd, path)
    finally:
        reader.close_root(fd)
    assert (root / "file").read_text() == "hello\n"


def test_fifo_with_a_writer_attached_is_still_refused(reader, root):
    # a writer that never writes: a blocking read would wait for it
    wfd = os.open(root / "fifo", os.O_RDWR | os.O_NONBLOCK)
    fd = reader.open_root(str(root))
    try:
        with pytest.raises(OSError) as info:
            reader.read_at(fd, "fifo")
        assert info.value.errno == errno.ENXIO
    finally:
        reader.close_root(fd)
        os.close(wfd)
