# Type checkers' view of pynuma._record: a Record subclass is a frozen dataclass whose fields are its
# annotations (PEP 681), so IDEs know every model field's name and type and each constructor's signature.
from typing import Any, ClassVar, Dict, Iterable, Tuple, TypeVar

from typing_extensions import dataclass_transform

_R = TypeVar("_R", bound="Record")

@dataclass_transform(eq_default=True, frozen_default=True)
class Record:
    _fields: ClassVar[Tuple[str, ...]]
    _defaults: ClassVar[Dict[str, Any]]
    @classmethod
    def _make(cls: type[_R], values: Iterable[Any]) -> _R: ...
    def replace(self: _R, **changes: Any) -> _R: ...
    def as_tuple(self) -> Tuple[Any, ...]: ...
    def _values(self) -> Tuple[Any, ...]: ...
    def __hash__(self) -> int: ...
