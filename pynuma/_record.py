"""A tiny frozen record base: immutable, slotted, compared by value.

``dataclasses`` costs ~14 ms to import (it pulls in ``inspect``), too much
for a CLI whose whole run must stay within interpreter start + 10 ms, so
the value types of :mod:`pynuma.model` use this instead::

    class Package(Record):
        _fields = ("id", "cpus")

    p = Package(0, CPUSet.parse("0-3"))
    p.id, p == Package(id=0, cpus=p.cpus), p.replace(id=1)

``_defaults`` gives trailing fields a default value.  A call with every
field positional takes a short fast path, which keeps building thousands
of records cheap without generating code per class (``exec`` at import
would cost more than it saves).
"""
_set = object.__setattr__  # bound to a record (_set.__get__(record)): a setter for map, no itertools
_new = object.__new__
# runs an iterator of _set's results (None, falsy) to its end, keeping nothing; a C loop,
# and unlike collections.deque it costs no import
_consume = any


def _init_slow(self, args: tuple, kwargs: dict) -> None:
    """Keyword arguments and defaults (the all-positional call takes the fast path)."""
    fields = self._fields
    name = type(self).__name__
    if len(args) > len(fields):
        raise TypeError(f"{name}() takes {len(fields)} arguments, got {len(args)}")
    for field, value in zip(fields, args):
        _set(self, field, value)
    defaults = self._defaults
    for field in fields[len(args):]:
        if field in kwargs:
            _set(self, field, kwargs.pop(field))
        elif field in defaults:
            _set(self, field, defaults[field])
        else:
            raise TypeError(f"{name}() missing argument {field!r}")
    if kwargs:
        extra = sorted(kwargs)
        dup = [k for k in extra if k in fields]
        raise TypeError(f"{name}() got {'multiple values for' if dup else 'unexpected'} argument(s) {extra}")


class Record:
    """Base of pynuma's immutable value types (see the module docstring)."""

    __slots__ = ()
    _fields: tuple = ()
    _defaults: dict = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        fields = tuple(cls.__dict__.get("_fields", ()))
        if "__slots__" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must declare __slots__ = _fields")
        defaults = dict(getattr(cls, "_defaults", {}))
        seen_default = False
        for name in fields:
            if name in defaults:
                seen_default = True
            elif seen_default:
                raise TypeError(f"{cls.__name__}: field {name!r} without default follows one with a default")

    def __init__(self, *args, **kwargs) -> None:
        fields = self._fields
        if not kwargs and len(args) == len(fields):
            # one C-level loop instead of a Python one: ~40% cheaper for a 10-field record
            _consume(map(_set.__get__(self), fields, args))
        else:
            _init_slow(self, args, kwargs)

    @classmethod
    def _make(cls, values):
        """A record from all its field values, in order, without argument checks (for bulk builders)."""
        self = _new(cls)
        _consume(map(_set.__get__(self), cls._fields, values))
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __ne__(self, other) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        # mappings (read-only views in the model) hash by their sorted items
        values = tuple(tuple(sorted(v.items())) if hasattr(v, "items") else v for v in self._values())
        return hash((type(self).__name__,) + values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self):
        return (type(self), self._values())

    def replace(self, **changes):
        """A copy with some fields changed."""
        values = {f: getattr(self, f) for f in self._fields}
        for key in changes:
            if key not in values:
                raise TypeError(f"{type(self).__name__} has no field {key!r}")
        values.update(changes)
        return type(self)(**values)

    def as_tuple(self) -> tuple:
        """The field values in declaration order."""
        return self._values()
