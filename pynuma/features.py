"""What this build and this kernel offer: ``pynuma.features()``.

Tests and callers skip or fall back on these flags instead of guessing from
version numbers::

    >>> import pynuma
    >>> pynuma.features()["openat2"]          # doctest: +SKIP
    True
"""
from __future__ import annotations

import os
from typing import Any, Dict

from . import _impl



def features() -> Dict[str, Any]:
    """Flags of the native core (``PN_HAS_*`` from native/pn_features.h, compiled in),
    whether openat2 works on the running kernel, and which areas run natively.

    Keys: ``native`` (the reader is native), ``openat2``, ``compiled``
    (``{"PN_HAS_OPENAT2": bool, ...}``), ``areas`` (``{"bitmap": "native"|"pure", ...}``),
    ``pure_forced`` and ``kernel`` (release string).
    """
    info = dict(_impl.select("fsread").features())
    info["areas"] = {a: ("native" if _impl.is_native(a) else "pure") for a in _impl.AREAS}
    info["pure_forced"] = _impl.pure_forced()
    info["kernel"] = os.uname().release
    return info


from ._callable_module import make_module_callable  # noqa: E402

make_module_callable(__name__, features)  # pynuma.features() after ``import pynuma.features`` too
