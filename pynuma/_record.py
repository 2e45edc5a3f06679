"""A tiny frozen record base: immutable, compared by value, cheap to build.

``dataclasses`` costs ~14 ms to import (it pulls in ``inspect``) and
``collections.namedtuple`` builds each class with ``exec``: too much for a
CLI whose whole run must stay close to the interpreter's start.  The value
types of :mod:`pynuma.model` use this instead; fields are declared with
annotations (type checkers see a frozen dataclass, see ``_record.pyi``)::

    class Package(Record):
        id: int
        cpus: CPUSet

    p = Package(0, CPUSet.parse("0-3"))
    p.id, p == Package(id=0, cpus=p.cpus), p.replace(id=1)

A field with a value in the class body has that default.  The older form,
``_fields = ("id", "cpus")`` with ``_defaults = {...}`` and ``__slots__ =
_fields``, declares the same record.  A record is a tuple underneath (a
field is read through a C-level getter, a record is built by one
``tuple.__new__``: a few times cheaper than setting slots), but it only
equals a record of its own class, and it cannot be changed.
"""
try:  # the C accessor itself: the operator module around it costs every command ~0.4 ms to import
    from _operator import itemgetter as _itemgetter
except ImportError:  # an interpreter without CPython's accelerator
    from operator import itemgetter as _itemgetter

_tuple_new = tuple.__new__


class _RecordType(type):
    """Makes each record class: its fields from ``_fields`` or its annotations, a getter per field."""

    def __new__(mcls, name, bases, ns, **kwargs):
        if not any(isinstance(b, _RecordType) for b in bases):  # Record itself
            return super().__new__(mcls, name, bases, ns, **kwargs)
        # the field getters, equality and repr index and iterate the underlying tuple
        overridden = sorted({"__getitem__", "__iter__", "__len__"} & set(ns))
        if overridden:
            raise TypeError(f"{name}: a record is a tuple underneath and cannot override {', '.join(overridden)}")
        if "_fields" in ns:
            fields = tuple(ns["_fields"])
            defaults = dict(ns.get("_defaults", {}))
            slots = tuple(ns.pop("__slots__", ()))
            if not set(fields) <= set(slots):
                raise TypeError(f"{name} must declare __slots__ = _fields")
        else:
            annotations = ns.get("__annotations__", {})
            fields = tuple(f for f in annotations if not f.startswith("_"))
            defaults = {f: ns.pop(f) for f in fields if f in ns}
            slots = tuple(ns.pop("__slots__", ()))
        seen_default = False
        for field in fields:
            if field in defaults:
                seen_default = True
            elif seen_default:
                raise TypeError(f"{name}: field {field!r} without default follows one with a default")
        # names beyond the fields (a lazily built index) live in the instance's __dict__
        if not set(slots) - set(fields):
            ns["__slots__"] = ()
        ns["_fields"] = fields
        ns["_defaults"] = defaults
        ns["_nfields"] = len(fields)
        for i, field in enumerate(fields):
            ns[field] = property(_itemgetter(i), doc=f"Field {i}: {field}.")
        return super().__new__(mcls, name, bases, ns, **kwargs)


def _values_of(cls, args: tuple, kwargs: dict) -> tuple:
    """All field values from keyword arguments and defaults (the all-positional call skips this)."""
    fields, name = cls._fields, cls.__name__
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} arguments, got {len(args)}")
    values = list(args)
    defaults = cls._defaults
    for field in fields[len(args):]:
        if field in kwargs:
            values.append(kwargs.pop(field))
        elif field in defaults:
            values.append(defaults[field])
        else:
            raise TypeError(f"{name}() missing argument {field!r}")
    if kwargs:
        extra = sorted(kwargs)
        dup = [k for k in extra if k in fields]
        raise TypeError(f"{name}() got {'multiple values for' if dup else 'unexpected'} argument(s) {extra}")
    return tuple(values)


class Record(tuple, metaclass=_RecordType):
    """Base of pynuma's immutable value types (see the module docstring)."""

    __slots__ = ()
    _fields: tuple = ()
    _defaults: dict = {}
    _nfields = 0

    def __new__(cls, *args, **kwargs):
        if not kwargs and len(args) == cls._nfields:
            return _tuple_new(cls, args)
        return _tuple_new(cls, _values_of(cls, args, kwargs))

    @classmethod
    def _make(cls, values):
        """A record from all its field values, in order, without argument checks (for bulk builders)."""
        return _tuple_new(cls, values)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple:
        return tuple(self)

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            # a plain tuple would answer for us, field by field: a record is not a tuple of its values
            return False if isinstance(other, tuple) else NotImplemented
        return tuple.__eq__(self, other)

    def __ne__(self, other) -> bool:
        if type(other) is not type(self):
            return True if isinstance(other, tuple) else NotImplemented
        return tuple.__ne__(self, other)

    def __hash__(self) -> int:
        # mappings (read-only views in the model) hash by their sorted items
        values = tuple(tuple(sorted(v.items())) if hasattr(v, "items") else v for v in self)
        return hash((type(self).__name__,) + values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"{type(self).__name__}({inner})"

    def __reduce__(self):
        return (type(self), tuple(self))

    def __getnewargs__(self):
        return tuple(self)

    def replace(self, **changes):
        """A copy with some fields changed."""
        values = dict(zip(self._fields, self))
        for key in changes:
            if key not in values:
                raise TypeError(f"{type(self).__name__} has no field {key!r}")
        values.update(changes)
        return type(self)(**values)

    def as_tuple(self) -> tuple:
        """The field values in declaration order."""
        return tuple(self)
