"""Providers' rules: the catalogue, the profiles that select from it, and their two uses.

A :class:`Profile` names the rules one provider enforces (``_profiles``); the repair side
applies them to the core's output (``_stage``), the checking side lists what a history
breaks without changing it (``_check``).
"""

from __future__ import annotations

from ._check import Checker, Violation, acheck, acheck_iter, check, check_iter
from ._models import MODEL_PATTERNS, ModelPattern, profile_for_model
from ._profiles import PROFILES, Profile, get_profile, load_profile
from ._rules import KEYS, RULES, Rule

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
