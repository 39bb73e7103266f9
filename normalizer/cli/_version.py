"""``chatnorm --version``: the version, and which build runs (compiled or pure Python).

Kept apart from ``_main`` (click and the commands' declarations): ``normalizer.cli.main``
answers a bare ``--version`` from here before importing anything else, so the line costs
the interpreter's start-up and little more. ``_main`` declares the same flags from here.
"""

from __future__ import annotations

__all__ = ["VERSION_FLAGS", "version_line"]

#: The flags that print the version (click's option in ``_main`` and the early answer in
#: ``normalizer.cli.main`` both read them here).
VERSION_FLAGS = ("-V", "--version")


def version_line() -> str:
    """``chatnorm, version X (compiled: N modules)`` or ``... (pure Python)``."""
    from .. import __version__
    from .._compiled import compiled

    build = f"compiled: {len(compiled)} modules" if compiled else "pure Python"
    return f"chatnorm, version {__version__} ({build})"
