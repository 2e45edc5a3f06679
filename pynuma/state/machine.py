"""The NUMA memory a Memory Manager is built on, read from a saved topology or from discovery."""
from __future__ import annotations

from typing import List, Optional

from ..errors import InputError
from ..policy.memorymanager.manager import machine_from_topology, machine_from_topology_json
from ..policy.memorymanager.requests import NodeInfo


def machine_for(topology_file: Optional[str] = None, root: str = "/") -> List[NodeInfo]:
    """NUMA memory from a saved topology JSON (errors name the file), or from discovery under ``root``."""
    if topology_file:
        from ..inputfile import load_json

        try:
            return machine_from_topology_json(load_json(topology_file))
        except InputError as err:
            if str(err).startswith(topology_file):
                raise
            raise InputError(f"{topology_file}: {err}") from None
    from ..discover import discover

    return machine_from_topology(discover(root))
