"""``Mapping``: the abstract base class ``collections.abc`` exports, without importing ``collections``.

``collections.abc`` re-exports the classes of ``_collections_abc``, which the
interpreter has already loaded (``os`` uses it); importing ``collections``
itself costs a short command 3-5 ms.  Run-time ``isinstance(x, Mapping)``
checks of decoded YAML/JSON (or any mapping an embedder passes) use this.
"""
try:
    from _collections_abc import Mapping
except ImportError:  # an interpreter without CPython's module layout
    from collections.abc import Mapping

__all__ = ["Mapping"]
