"""Names loaded on first use (PEP 562), for the modules that only list them: package front doors, mostly.

``normalizer``, ``normalizer.formats`` and ``normalizer.profiles`` each keep an export table
(public name -> the module that defines it) and answer ``__getattr__``/``__dir__`` from it,
so that importing the package loads nothing the caller does not use; ``normalizer._messages``
names its pydantic models the same way. This module imports nothing of the package.
"""

from __future__ import annotations

import importlib

# typing is not imported at run time: `import normalizer` (and `chatnorm --version`) would pay
# for it and for re (type checkers treat any TYPE_CHECKING name as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["load_export", "export_names"]


def load_export(namespace: dict[str, Any], exports: Mapping[str, str], name: str) -> Any:
    """The export ``name`` (a key of ``exports``) from its module, relative to the package
    of the module whose globals are ``namespace`` (a package's ``__init__``: that package);
    stored there, so the next lookup is a plain attribute."""
    value = getattr(importlib.import_module(exports[name], namespace["__package__"]), name)
    namespace[name] = value
    return value


def export_names(namespace: dict[str, Any], exports: Mapping[str, str]) -> list[str]:
    """``dir()`` of such a package: what it holds and what it exports."""
    return sorted({*namespace, *exports})
