"""pynuma._dataclass behaves like dataclasses / typing.NamedTuple for the features the package uses."""
from __future__ import annotations

import dataclasses
import typing

import pytest

from pynuma import _dataclass as shim


def _pair(frozen):
    """The same class declared with the stdlib and with the shim."""
    made = []
    for mod in (dataclasses, shim):
        @mod.dataclass(frozen=frozen)
        class Thing:
            name: str
            size: int = 0
            tags: list = mod.field(default_factory=list)
            ratio: float = mod.field(default=0.5)

            def double(self) -> int:
                return self.size * 2

        made.append(Thing)
    return made


@pytest.mark.parametrize("frozen", [False, True])
def test_same_behaviour_as_dataclasses(frozen):
    std, ours = _pair(frozen)
    for args, kwargs in [(("a",), {}), (("a", 3), {}), ((), {"name": "b", "tags": [1]}), (("c", 1, [2], 0.25), {})]:
        a, b = std(*args, **kwargs), ours(*args, **kwargs)
        assert repr(a).replace("_pair.<locals>.", "") == repr(b).replace("_pair.<locals>.", "")
        assert vars(a) == vars(b) and b.double() == a.double()
        assert (b == ours(*args, **kwargs)) and b != ours("other") and (b == a) is False
        if frozen:
            assert hash(ours("a", 1, ())) == hash(ours("a", 1, ())) == hash(std("a", 1, ()))
            with pytest.raises(AttributeError):
                b.size = 9
        else:
            assert std.__hash__ is None and ours.__hash__ is None
            b.size = 9
            assert b.size == 9
    assert ours("x").tags is not ours("x").tags  # a fresh default per instance
    for bad in [(), ("a", 1, [], 0.1, "extra")]:
        with pytest.raises(TypeError):
            std(*bad)
        with pytest.raises(TypeError):
            ours(*bad)
    with pytest.raises(TypeError):
        ours("a", nope=1)


def test_replace_and_asdict():
    std, ours = _pair(True)
    b = ours("a", 2, [1])
    assert shim.replace(b, size=5) == ours("a", 5, [1])
    assert dataclasses.replace(b, size=5) == ours("a", 5, [1])  # the stdlib's replace works on them too
    assert shim.asdict(b) == dataclasses.asdict(std("a", 2, [1]))

    @shim.dataclass(frozen=True)
    class Outer:
        inner: object
        items: tuple = ()

    assert shim.asdict(Outer(b, (b,))) == {"inner": shim.asdict(b), "items": (shim.asdict(b),)}


def test_fields_include_inherited_ones_in_order():
    _, ours = _pair(True)

    @shim.dataclass(frozen=True)
    class Child(ours):
        extra: int = 0

    assert [f.name for f in shim.fields(Child)] == [f.name for f in shim.fields(ours)] + ["extra"]
    assert shim.fields(Child("a", 1, [], 3)) == shim.fields(Child)
    with pytest.raises(TypeError):
        shim.fields(object())


def test_non_default_after_default_is_refused():
    with pytest.raises(TypeError):
        @shim.dataclass
        class Bad:
            a: int = 1
            b: int


def test_named_tuple_like_typing():
    classes = []
    for base in (typing.NamedTuple, shim.NamedTuple):
        class Row(base):
            """A row."""

            path: str
            size: int = 0

            @property
            def big(self) -> bool:
                return self.size > 10

        classes.append(Row)
    std, ours = classes
    assert ours("p", 20) == std("p", 20) and repr(ours("p")) == repr(std("p"))
    assert ours("p", 20).big and ours._fields == std._fields and ours("p")._asdict() == std("p")._asdict()
    assert ours.__doc__ == "A row." and ours._field_defaults == std._field_defaults
    assert isinstance(ours("p"), tuple)
