"""The root-relative reader on tmp trees: native (openat2 and walk) and pure agree,
and nothing escapes the root."""
from __future__ import annotations

import errno
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pynuma import _impl

IMPLS = _impl.implementations("fsread")
KINDS = ["pure"] + (["native", "native-walk"] if "native" in IMPLS else [])


@pytest.fixture(params=["native", "native-walk", "pure"])
def reader(request):
    """(module) for one implementation; native-walk forces the pre-openat2 path."""
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


def build_tree(base):
    """root/ with files, relative/absolute/escaping/looping links; a secret beside the root."""
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (base / "secret").write_text("OUTSIDE")
    (root / "secret").write_text("inside")
    (root / "a" / "b" / "f").write_text("hello\n")
    (root / "big").write_bytes(bytes(range(256)) * 200)  # 51200 bytes: more than one buffer
    links = {"a/b/up": "../../../secret", "a/abs": "/secret", "a/b/absdir": "/a", "a/rel": "b",
             "loop": "loop", "dangle": "/nowhere", "a/b/deep": "../../../../../../../secret",
             "a/viadir": "../a/b/../b/f"}
    for name, target in links.items():
        os.symlink(target, root / name)
    return root


@pytest.fixture
def tree(tmp_path):
    return build_tree(tmp_path)


def test_reads_and_stays_inside(reader, tree):
    fd = reader.open_root(str(tree))
    try:
        assert reader.read_at(fd, "a/b/f") == b"hello\n"
        assert reader.read_at(fd, "/a/b/f") == b"hello\n"
        assert reader.read_at(fd, "a/abs") == b"inside"          # absolute link re-based on the root
        assert reader.read_at(fd, "a/b/up") == b"inside"         # .. clamps at the root
        assert reader.read_at(fd, "a/b/deep") == b"inside"
        assert reader.read_at(fd, "../../secret") == b"inside"
        assert reader.read_at(fd, "a/b/absdir/b/f") == b"hello\n"
        assert reader.read_at(fd, "a/rel/f") == b"hello\n"
        assert reader.read_at(fd, "a/viadir") == b"hello\n"
        assert reader.read_at(fd, "big") == bytes(range(256)) * 200
        assert reader.read_at(fd, "big", 1000) == (bytes(range(256)) * 4)[:1000]
        assert reader.read_at(fd, "big", 0) == b""
    finally:
        reader.close_root(fd)


@pytest.mark.parametrize("path, exc, code", [
    ("missing", FileNotFoundError, errno.ENOENT),
    ("dangle", FileNotFoundError, errno.ENOENT),
    ("a/b/f/x", NotADirectoryError, errno.ENOTDIR),
    ("a", IsADirectoryError, errno.EISDIR),
    ("loop", OSError, errno.ELOOP),
])
def test_errors(reader, tree, path, exc, code):
    fd = reader.open_root(str(tree))
    try:
        with pytest.raises(exc) as info:
            reader.read_at(fd, path)
        assert info.value.errno == code
    finally:
        reader.close_root(fd)


def test_kind_and_list(reader, tree):
    fd = reader.open_root(str(tree))
    try:
        assert [reader.kind_at(fd, p) for p in ("a/b/f", "a", "a/rel", "dangle", "missing", "", "a/abs")] \
            == [1, 2, 2, 0, 0, 2, 1]
        assert sorted(reader.list_at(fd, "a/b/absdir")) == ["abs", "b", "rel", "viadir"]
        assert sorted(reader.list_at(fd, "/")) == ["a", "big", "dangle", "loop", "secret"]
        with pytest.raises(FileNotFoundError):
            reader.list_at(fd, "missing")
        with pytest.raises(NotADirectoryError):
            reader.list_at(fd, "secret")
    finally:
        reader.close_root(fd)


def test_read_many_mixes_ok_and_errors(reader, tree):
    fd = reader.open_root(str(tree))
    try:
        got = reader.read_many(fd, ["a/b/f", "missing", "a/abs", "a", "big", "loop"])
        assert got[0] == b"hello\n" and got[2] == b"inside"
        assert got[1] == -errno.ENOENT and got[3] == -errno.EISDIR and got[5] == -errno.ELOOP
        assert got[4] == bytes(range(256)) * 200
        assert reader.read_many(fd, ["big"], 100) == [bytes(range(100))]
        assert reader.read_many(fd, []) == []
        many = reader.read_many(fd, ["a/b/f"] * 500)
        assert many == [b"hello\n"] * 500
    finally:
        reader.close_root(fd)


def test_write_existing_only(reader, tree):
    fd = reader.open_root(str(tree))
    try:
        assert reader.write_at(fd, "a/abs", b"new") == 3       # through the re-based link
        assert (tree / "secret").read_text() == "new"
        assert (tree.parent / "secret").read_text() == "OUTSIDE"
        with pytest.raises(FileNotFoundError):
            reader.write_at(fd, "created", b"x")
        assert not (tree / "created").exists()
    finally:
        reader.close_root(fd)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may read anything")
def test_unreadable_is_permission_error(reader, tree):
    os.chmod(tree / "secret", 0)
    fd = reader.open_root(str(tree))
    try:
        with pytest.raises(PermissionError):
            reader.read_at(fd, "secret")
        assert reader.read_many(fd, ["secret"]) == [-errno.EACCES]
    finally:
        reader.close_root(fd)


def test_open_root_missing(reader, tmp_path):
    with pytest.raises(FileNotFoundError):
        reader.open_root(str(tmp_path / "nope"))


def test_live_sys_readable(reader):
    fd = reader.open_root("/")
    try:
        if reader.kind_at(fd, "/sys/devices/system/cpu") != 2:
            pytest.skip("no /sys here")
        assert reader.read_at(fd, "/sys/devices/system/cpu/possible").strip()
        assert "cpu0" in reader.list_at(fd, "/sys/devices/system/cpu")
    finally:
        reader.close_root(fd)


# -- every implementation resolves any path the same way ------------------------------------
def _outcome(mod, fd, path):
    try:
        data = mod.read_at(fd, path)
    except OSError as err:
        data = err.errno
    return data, mod.kind_at(fd, path)


components = st.sampled_from(["a", "b", "f", "..", ".", "", "rel", "abs", "absdir", "up", "deep",
                              "secret", "viadir", "loop", "dangle"])


@pytest.mark.skipif("native" not in IMPLS, reason="native fsread not built")
@pytest.mark.parametrize("path", ["a/rel/.", "/a/rel/.", "a/viadir/.", "a/b/deep/.", "a/rel//"])
def test_a_link_followed_by_dot_resolves_beside_the_link(tree, path):
    # "." is not a component: the link's target is relative to the link's own directory
    outcomes = []
    for mod in (IMPLS["pure"], IMPLS["native"]):
        fd = mod.open_root(str(tree))
        try:
            outcomes.append(_outcome(mod, fd, path))
        finally:
            mod.close_root(fd)
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] != 0  # it exists


@pytest.mark.skipif("native" not in IMPLS, reason="native fsread not built")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(components, max_size=7), lead=st.booleans())
def test_all_implementations_agree(tmp_path_factory, parts, lead):
    base = getattr(test_all_implementations_agree, "_tree", None)
    if base is None:
        base = build_tree(tmp_path_factory.mktemp("agree"))
        test_all_implementations_agree._tree = base
    path = ("/" if lead else "") + "/".join(parts)
    native, pure = IMPLS["native"], IMPLS["pure"]
    results = []
    for mod, walk in ((pure, False), (native, False), (native, True)):
        if mod is native:
            native._walk_only(walk)
        fd = mod.open_root(str(base))
        try:
            results.append(_outcome(mod, fd, path))
        finally:
            mod.close_root(fd)
    native._walk_only(False)
    assert results[0] == results[1] == results[2], path
    assert results[0][0] != b"OUTSIDE"


# -- read_many_text: the text form FsRoot uses; short reads -----------------------------------
def test_read_many_text_matches_read_many(reader, tree):
    (tree / "latin1").write_bytes(b"caf\xe9\n")
    fd = reader.open_root(str(tree))
    try:
        paths = ["/a/b/f", "missing", "a/abs", "a", "big", "loop", "latin1", "/"]
        raw = reader.read_many(fd, paths)
        text = reader.read_many_text(fd, paths)
        assert text == [r.decode("utf-8", "replace") if isinstance(r, bytes) else None for r in raw]
        assert text[0] == "hello\n" and text[1] is None and text[6] == "caf\ufffd\n"
        assert reader.read_many_text(fd, ["big"], 100) == [bytes(range(100)).decode("utf-8", "replace")]
        assert reader.read_many_text(fd, []) == []
    finally:
        reader.close_root(fd)


def test_read_many_text_undecodable_path_name(reader, tmp_path):
    name = b"n\xff"
    (tmp_path / os.fsdecode(name)).write_text("x")
    fd = reader.open_root(str(tmp_path))
    try:
        assert reader.read_many_text(fd, [os.fsdecode(name), "nope"]) == ["x", None]
    finally:
        reader.close_root(fd)


@pytest.mark.parametrize("size", [1, 4095, 4096, 8192, 65535, 65536, 65537, 200000])
@pytest.mark.parametrize("where", ["sys/devices/system/cpu", "proc", "etc"])
def test_read_many_whole_files_of_any_size(reader, tmp_path, size, where):
    # where a short read is taken as the end (sysfs attribute directories) or not,
    # a regular file is read whole up to the limit
    data = bytes((i * 7) % 251 for i in range(size))
    (tmp_path / where).mkdir(parents=True)
    (tmp_path / where / "f").write_bytes(data)
    fd = reader.open_root(str(tmp_path))
    try:
        assert reader.read_many(fd, [f"/{where}/f"], 1 << 20) == [data]
        assert reader.read_many(fd, [f"{where}/f"]) == [data[:1 << 16]]
    finally:
        reader.close_root(fd)


def test_live_proc_seq_file_read_whole(reader):
    # /proc/self/mountinfo is a seq_file: one kernel buffer per read(), so it must be read to EOF
    fd = reader.open_root("/")
    try:
        def direct():
            with open("/proc/self/mountinfo", "rb") as f:
                return f.read()

        # mounts come and go on a busy host (containers, automounts): compare at a quiet moment
        for _ in range(5):
            want = direct()
            # a limit above any mount table (the default 64 KiB is less than a busy k8s node's)
            got = reader.read_many(fd, ["/proc/self/mountinfo"], 1 << 24)[0]
            if not isinstance(got, bytes):
                pytest.skip("no /proc here")
            if direct() == want:
                break
        else:
            pytest.skip("the mount table kept changing")
        assert got.count(b"\n") == want.count(b"\n")
    finally:
        reader.close_root(fd)


def test_list_names_returns_errno_instead_of_raising(reader, tree):
    fd = reader.open_root(str(tree))
    try:
        assert sorted(reader.list_names(fd, "/a/b/absdir")) == sorted(reader.list_at(fd, "a/b/absdir"))
        assert sorted(reader.list_names(fd, "/")) == ["a", "big", "dangle", "loop", "secret"]
        assert reader.list_names(fd, "missing") == -errno.ENOENT
        assert reader.list_names(fd, "secret") == -errno.ENOTDIR
        assert reader.list_names(fd, "loop") == -errno.ELOOP
    finally:
        reader.close_root(fd)
