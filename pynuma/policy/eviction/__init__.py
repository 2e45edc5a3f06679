"""The kubelet eviction manager as pure functions.

* :mod:`.signals` — signal names, resource and node-condition maps;
* :mod:`.thresholds` — flag / KubeletConfiguration parsing, defaults, containerfs derivation;
* :mod:`.observations` — signal observations from a stats summary;
* :mod:`.met` — thresholds met, min-reclaim, grace periods, updated stats;
* :mod:`.conditions` — node conditions and the pressure transition period;
* :mod:`.ranking` — the comparator chains that order eviction victims;
* :mod:`.manager` — one synchronize pass as ``(config, state, stats, pods, now) -> (state, decision)``.

Nothing here reads the machine: :mod:`pynuma.pressure.host` does that.
"""
from __future__ import annotations

from .thresholds import Threshold, ThresholdValue, parse_threshold_config, parse_flags  # noqa: F401
