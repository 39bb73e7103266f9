"""Profiles: what to repair for a named provider. (Minimal: the default profile.)"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._errors import UsageError

__all__ = ["Profile", "PROFILES", "get_profile", "make_stage"]


class Profile(BaseModel):
    """Which repairs apply, as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    """Defaults for the core's options (the caller's keywords win)."""

    def core_options(self) -> dict[str, Any]:
        return dict(self.options)


PROFILES: dict[str, Profile] = {
    "default": Profile(name="default", description="The core's repairs, for any provider."),
}


def get_profile(profile: Any) -> Profile:
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, str) and profile in PROFILES:
        return PROFILES[profile]
    raise UsageError(f"unknown profile {profile!r}; the profiles are: {', '.join(sorted(PROFILES))}")


def make_stage(profile: Profile) -> Any:
    """The profile's repair stage after the core, or None when it has nothing to do."""
    return None
