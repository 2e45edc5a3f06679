"""``@dataclass`` for the value types on the commands' start-up path, without importing dataclasses.

``import dataclasses`` costs a read-only command about a third of its
start-up budget (it pulls in ``inspect``, ``ast``, ``dis``, ``re``...).
The classes decorated here use a small part of it -- fields from the
annotations, defaults, ``field(default_factory=...)``, ``frozen=True`` --
and get the same ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and
immutability as from ``dataclasses``, plus :func:`replace` and
:func:`asdict`.  ``dataclasses.replace`` works on them too.  Likewise
:class:`NamedTuple` is ``typing.NamedTuple``'s class syntax without
importing typing or ``collections`` (the class is what
``collections.namedtuple`` makes: a tuple with named fields, ``_make``,
``_replace``, ``_asdict``, ``_fields``, ``_field_defaults``).

>>> @dataclass(frozen=True)
... class Point:
...     x: int
...     y: int = 0
>>> Point(1), Point(1) == Point(x=1, y=0), replace(Point(1), y=2)
(Point(x=1, y=0), True, Point(x=1, y=2))
"""
from ._record import Record, _tuple_new

_MISSING = object()
_set = object.__setattr__


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen dataclass (as ``dataclasses.FrozenInstanceError``)."""


class Field:
    """One field; also what ``dataclasses.replace`` reads from ``__dataclass_fields__``."""

    __slots__ = ("name", "default", "default_factory", "init", "repr", "compare", "_field_type")

    def __init__(self, default=_MISSING, default_factory=_MISSING, init=True, repr=True, compare=True) -> None:
        if default is not _MISSING and default_factory is not _MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.compare = init, repr, compare
        self._field_type = None


def field(*, default=_MISSING, default_factory=_MISSING, init=True, repr=True, compare=True):
    """A field with a default or a factory for it (``dataclasses.field``)."""
    return Field(default, default_factory, init, repr, compare)


def _fields_of(cls) -> list:
    fields: dict = {}
    for base in reversed(cls.__mro__[1:]):
        for f in getattr(base, "__pn_fields__", ()):
            fields[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.replace("typing.", "").startswith("ClassVar"):
            continue
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        if isinstance(value, Field):
            if f.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        fields[name] = f
    return list(fields.values())


def _make_init(cls, fields: list, frozen: bool):
    names = tuple(f.name for f in fields if f.init)
    by_name = {f.name: f for f in fields}
    seen_default = False
    for n in names:
        f = by_name[n]
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {n!r} follows default argument")
    post_init = getattr(cls, "__post_init__", None)
    qualname = cls.__qualname__

    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{qualname}.__init__() takes {len(names) + 1} positional arguments "
                            f"but {len(args) + 1} were given")
        for name, value in zip(names, args):
            _set(self, name, value)
        for name in names[len(args):]:
            if name in kwargs:
                _set(self, name, kwargs.pop(name))
                continue
            f = by_name[name]
            if f.default is not _MISSING:
                _set(self, name, f.default)
            elif f.default_factory is not _MISSING:
                _set(self, name, f.default_factory())
            else:
                raise TypeError(f"{qualname}.__init__() missing required argument: {name!r}")
        if kwargs:
            key = next(iter(kwargs))
            how = "multiple values for" if key in names else "an unexpected keyword"
            raise TypeError(f"{qualname}.__init__() got {how} argument {key!r}")
        for f in fields:
            if not f.init:
                _set(self, f.name, f.default_factory() if f.default_factory is not _MISSING else f.default)
        if post_init is not None:
            post_init(self)

    __init__.__qualname__ = f"{qualname}.__init__"
    return __init__


def _process(cls, frozen: bool, eq: bool):
    fields = _fields_of(cls)
    cls.__pn_fields__ = tuple(fields)
    cls.__dataclass_fields__ = {f.name: f for f in fields}
    compared = tuple(f.name for f in fields if f.compare)
    shown = tuple(f.name for f in fields if f.repr)
    if "__init__" not in cls.__dict__:
        cls.__init__ = _make_init(cls, fields, frozen)
    if "__repr__" not in cls.__dict__:
        def __repr__(self):
            inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
            return f"{type(self).__qualname__}({inner})"

        cls.__repr__ = __repr__
    if eq and "__eq__" not in cls.__dict__:
        def __eq__(self, other):
            if other.__class__ is not self.__class__:
                return NotImplemented
            return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)

        cls.__eq__ = __eq__
    if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
        if eq and frozen:
            def __hash__(self):
                return hash(tuple(getattr(self, n) for n in compared))

            cls.__hash__ = __hash__
        elif eq:
            cls.__hash__ = None
    if frozen:
        def __setattr__(self, name, value):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")

        def __delattr__(self, name):
            raise FrozenInstanceError(f"cannot delete field {name!r}")

        cls.__setattr__ = __setattr__
        cls.__delattr__ = __delattr__
    cls.__match_args__ = tuple(f.name for f in fields if f.init)
    return cls


def dataclass(cls=None, *, frozen: bool = False, eq: bool = True):
    """``@dataclass`` / ``@dataclass(frozen=True)`` (the subset in the module docstring)."""
    def wrap(c):
        return _process(c, frozen, eq)

    return wrap if cls is None else wrap(cls)


def fields(class_or_instance) -> tuple:
    """The fields of a class made here, or of its instance (``dataclasses.fields``, which sees none of them)."""
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    found = getattr(cls, "__pn_fields__", None)
    if found is None:
        raise TypeError("fields() should be called on a dataclass or an instance of one")
    return found


def replace(obj, **changes):
    """A copy of ``obj`` with some fields changed (``dataclasses.replace``)."""
    fields = getattr(type(obj), "__pn_fields__", None)
    if fields is None:
        raise TypeError("replace() should be called on dataclass instances")
    for f in fields:
        if f.init and f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)


def asdict(obj) -> dict:
    """The fields as a dict, nested dataclasses, lists, tuples and dicts converted (``dataclasses.asdict``)."""
    return _asdict(obj)


def _asdict(value):
    fields = getattr(type(value), "__pn_fields__", None)
    if fields is not None:
        return {f.name: _asdict(getattr(value, f.name)) for f in fields}
    if isinstance(value, (list, tuple)):
        return type(value)(_asdict(v) for v in value)
    if isinstance(value, dict):
        return type(value)((_asdict(k), _asdict(v)) for k, v in value.items())
    return value


def _nt_make(cls, iterable):
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _nt_replace(self, **changes):
    result = self._make(map(changes.pop, self._fields, self))
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return result


def _nt_asdict(self) -> dict:
    return dict(zip(self._fields, self))


# construction (positional, keywords, defaults), repr and pickling arguments as a Record's
_NT_METHODS = {"__new__": Record.__dict__["__new__"], "__repr__": Record.__repr__,
               "__getnewargs__": Record.__getnewargs__,
               "_make": classmethod(_nt_make), "_replace": _nt_replace, "_asdict": _nt_asdict}
_NT_RESERVED = ("_make", "_replace", "_asdict", "_source", "_fields", "_field_defaults", "__new__",
                "__init__", "__getnewargs__")


class _NamedTupleMeta(type):
    """Turns ``class X(NamedTuple): a: int; b: str = ""`` into a tuple class with named fields, as typing does."""

    def __new__(mcls, name, bases, ns):
        if ns.get("_root"):
            return super().__new__(mcls, name, bases, ns)
        from ._record import _itemgetter as itemgetter

        annotations = ns.get("__annotations__", {})
        fields = tuple(annotations)
        defaults = {}
        for f in fields:
            if f in ns:
                defaults[f] = ns[f]
            elif defaults:
                raise TypeError(f"Non-default namedtuple field {f} cannot follow default field")
        body = {"__slots__": (), "__module__": ns.get("__module__"), "__qualname__": ns.get("__qualname__", name),
                "__doc__": ns.get("__doc__") or f"{name}({', '.join(fields)})",
                "__annotations__": dict(annotations), "__match_args__": fields,
                "_fields": fields, "_nfields": len(fields), "_field_defaults": defaults, "_defaults": defaults}
        for i, f in enumerate(fields):
            body[f] = property(itemgetter(i), doc=f"Alias for field number {i}")
        body.update(_NT_METHODS)
        for key, value in ns.items():
            if key in _NT_RESERVED:
                raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
            if key not in body and key not in fields and key not in ("__slots__", "_root"):
                body[key] = value
        return type(name, (tuple,), body)


NamedTuple = _NamedTupleMeta("NamedTuple", (), {"_root": True})
