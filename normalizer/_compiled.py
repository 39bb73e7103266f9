"""Which build runs: the modules of the package that are compiled extensions (mypyc).

A wheel built with a C compiler holds a compiled copy of the hot modules beside their
sources (``.ci/build_hook.py``); Python's import system loads an extension module before a
``.py`` file of the same name in a folder, so the extensions found in the package's folders
are the modules that run compiled. Read from the folders rather than from the loaded
modules: asking must not import the engine (``chatnorm --version`` says it).
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES

__all__ = ["compiled", "compiled_modules"]


def compiled_modules(root: str | None = None) -> tuple[str, ...]:
    """The dotted names of the compiled modules under ``root`` (default: this package),
    sorted; empty for the pure-Python build. Only this interpreter's extension suffixes count
    (a ``.so`` built for another Python is neither counted nor imported)."""
    root = os.path.dirname(os.path.abspath(__file__)) if root is None else root
    package = os.path.basename(root)
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        prefix = os.path.relpath(folder, root).replace(os.sep, ".")
        for name in files:
            suffix = next((s for s in EXTENSION_SUFFIXES if name.endswith(s)), None)
            if suffix is not None:
                stem = name[: -len(suffix)]
                found.append(".".join(p for p in (package, prefix if prefix != "." else "", stem) if p))
    return tuple(sorted(found))


compiled: tuple[str, ...] = compiled_modules()
"""Which build runs: the dotted names of the modules that run compiled (mypyc), ``()`` for the
pure-Python build, so it reads as a bool too (``chatnorm --version`` says the same). Found once,
on first use, from the package's folders: asking imports none of the engine."""
