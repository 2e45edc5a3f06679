from typing import Sequence, Tuple

INF: int

def suffix_tables(opts: Sequence[Sequence[Tuple[int, int, int, int]]], J: int, X: int,
                  j_least: int = -1) -> Sequence[int]: ...
