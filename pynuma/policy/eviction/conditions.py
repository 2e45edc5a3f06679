"""Node conditions (MemoryPressure, DiskPressure, PIDPressure) and the pressure transition period."""
from __future__ import annotations

from .signals import conditions_for_signals
from .thresholds import Threshold

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs the commands' start-up
    from typing import Dict, Iterable, List, Mapping

DEFAULT_PRESSURE_TRANSITION_PERIOD_S = 300.0


def node_conditions(thresholds: Iterable[Threshold]) -> List[str]:
    """Conditions raised by met thresholds, deduplicated, first-seen order."""
    return conditions_for_signals(t.signal for t in thresholds)


def node_conditions_last_observed_at(conditions: Iterable[str], last: Mapping[str, float],
                                     now: float) -> Dict[str, float]:
    """Observed conditions are stamped ``now``; the others keep their last time."""
    out = {c: now for c in conditions}
    for c, at in last.items():
        out.setdefault(c, at)
    return out


def node_conditions_observed_since(observed_at: Mapping[str, float], period: float, now: float) -> List[str]:
    """Conditions still reported: last observed less than ``period`` seconds ago (strict)."""
    return [c for c, at in observed_at.items() if now - at < period]
