"""A caller's mistakes that mypy --strict must reject (tests/test_types.py pins each line)."""

from __future__ import annotations

from typing import Any

from normalizer import Normalizer, repair, repairing


def mistakes(stored: list[dict[str, Any]]) -> None:
    Normalizer(trailing_calls="stubb")  # line 11: a value the option does not take
    Normalizer(profil="mistral")  # line 12: a misspelled option
    repair(stored, profile="mistrall")  # line 13: an unknown profile
    repairing(orphan_result="drop")  # line 14: a misspelled option of the decorator
