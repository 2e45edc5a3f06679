from typing import Optional, Sequence, Tuple

def merge(default: int, lists: Sequence[Tuple[Sequence[int], bytes]], closest: bool,
          dist: Optional[Sequence[Sequence[int]]], budget: int,
          strategy: str = "auto") -> Tuple[int, bool, bool]: ...

def merge_hints(default: int, hint_lists: Sequence[Sequence[object]], closest: bool,
                dist: Optional[Sequence[Sequence[int]]], budget: int,
                strategy: str = "auto") -> Tuple[int, bool, bool]: ...
