"""Kubelet checkpoint files: ``cpu_manager_state`` (and ``memory_manager_state``), read and written compatibly.

Each kind lives in its own module (``cpu_checkpoint``, ``memory_checkpoint``);
``checksum`` holds what they share: FNV-1a-32 and the go-spew text the
kubelet hashes.
"""
