from typing import Optional, Sequence, Tuple

def merge(default: int, lists: Sequence[Tuple[Sequence[int], bytes]], closest: bool,
          dist: Optional[Sequence[Sequence[int]]], budget: int,
          strategy: str = "auto") -> Tuple[int, bool, bool]: ...
