from typing import Dict, Iterable, List, Tuple, Union

STAT: int
STATUS: int
MAPS: int
THREADS: int

Text = Union[str, int]
Process = Tuple[Text, Text, int, int, int, List[Tuple[int, int, int, int]], List[Tuple[str, int]], int,
                List[Tuple[int, int, Text]]]

def limits() -> Dict[str, int]: ...
def read_processes(rootfd: int, pids: Iterable[int], flags: int) -> List[Union[int, Process]]: ...
