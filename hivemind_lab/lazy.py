"""Package attributes imported on first use (PEP 562 module ``__getattr__``).

A light path (``--help``, checking a problem or experiment file) must not pay for what the heavy
modules behind a package import (scikit-learn, polars, the engine), so packages name where each
public attribute lives and import it when it is first read.

Each such package writes its public names once, as the re-exports of an ``if TYPE_CHECKING:``
block (``from home import Name as Name``), which type checkers read; `homes` reads the same
block from the package's source into its table (name → defining module), and
``__all__ = sorted(_HOMES)`` and ``__getattr__ = lazy_exports(__name__, _HOMES)`` come from it
(tests/test_lazy.py checks that every name imports from its home).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def homes(package: str) -> dict[str, str]:
    """The public names of ``package`` and the module defining each, read from the
    ``if TYPE_CHECKING:`` re-exports of its ``__init__`` (parsed, never imported)."""
    path = sys.modules[package].__file__
    assert path is not None  # a package's __init__ is a file
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    return {
        alias.asname or alias.name: node.module
        for block in tree.body
        if isinstance(block, ast.If) and getattr(block.test, "id", "") == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


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
