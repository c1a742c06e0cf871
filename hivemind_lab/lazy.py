"""Package attributes imported on first use (PEP 562 module ``__getattr__``).

A light path (``--help``, checking a problem or experiment file) must not pay for what the heavy
modules behind a package import (scikit-learn, polars, the engine), so packages name where each
public attribute lives and import it when it is first read.

Each such package writes its public names once, in a ``_HOMES`` table (name → defining module):
``__all__ = sorted(_HOMES)`` and ``__getattr__ = lazy_exports(__name__, _HOMES)`` come from it,
and a ``TYPE_CHECKING`` block re-exports the same names for type checkers (tests/test_lazy.py
checks that the block and the table agree and that every name imports).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``homes`` maps attribute → module defining it.

    All attributes of one module are bound together. No public name may equal a submodule's
    name: importing ``package.name`` elsewhere binds the module on the package, after which
    ``__getattr__`` is never asked (tests/test_lazy.py checks every package)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        namespace.update({n: getattr(module, n) for n, h in homes.items() if h == home})
        return namespace[name]

    return __getattr__
