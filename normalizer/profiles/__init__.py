"""Providers' rules: the catalogue, the profiles that select from it, and their two uses.

A :class:`Profile` names the rules one provider enforces (``_profiles``; the built-in ones
are data, ``_builtins``). Each canonical key is one rule object (``rules/``, a module per
family) holding what the checking side reports (``_check`` walks a history and asks the
rules in force) and what the repair side does about it (``repair()``: what the spelling,
``_encode``, writes on each message the core emits, and what the stage, ``_stage``, does
across messages), beside its providers' own words and evidence (``_rules.Rule`` entries,
gathered into the catalogue, ``rules.RULES``).
"""

from __future__ import annotations

# Names are loaded lazily (PEP 562), as in the package's own __init__: the core imports
# ``profiles._encode`` and ``profiles._profiles``, which runs this file first, and a repair
# needs neither the checker nor the model table (each a few ms of start-up, the checker's
# models built with pydantic). Type checkers see the names through the TYPE_CHECKING
# imports, which mirror _EXPORTS (tests/profiles/test_profile_names_lazy.py).

from typing import TYPE_CHECKING, Any

from .._lazy import export_names, load_export

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Checker", "Violation", "acheck", "acheck_iter", "check", "check_iter"), "._check"),
    **dict.fromkeys(("MODEL_PATTERNS", "ModelPattern", "profile_for_model"), "._models"),
    **dict.fromkeys(("PROFILES", "Profile", "get_profile", "load_profile"), "._profiles"),
    **dict.fromkeys(("KEYS", "RULES"), ".rules"),
    "Rule": "._rules",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return load_export(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return export_names(globals(), _EXPORTS)


if TYPE_CHECKING:
    from ._check import Checker, Violation, acheck, acheck_iter, check, check_iter
    from ._models import MODEL_PATTERNS, ModelPattern, profile_for_model
    from ._profiles import PROFILES, Profile, get_profile, load_profile
    from ._rules import Rule
    from .rules import KEYS, RULES

__all__ = [
    "acheck",
    "acheck_iter",
    "check",
    "check_iter",
    "Checker",
    "get_profile",
    "KEYS",
    "load_profile",
    "MODEL_PATTERNS",
    "ModelPattern",
    "profile_for_model",
    "Profile",
    "PROFILES",
    "Rule",
    "RULES",
    "Violation",
]
