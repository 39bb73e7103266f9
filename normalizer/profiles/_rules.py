"""A provider rule's words, as a value: :class:`Rule`, one per provider error, and :func:`render`.

Each rule is one provider error: its id in ``providers.md`` (``OA-1``, ``AN-5``, ``MI-4``
...), the canonical *keys* it enforces (``tool.unanswered_call``, ``role.alternate`` ...,
``rules.KEYS``), the error text **as the provider words it** (quoted verbatim from the
research, ``{i}``-style placeholders filled in by :func:`render`), and the evidence (issues,
PRs, documentation URLs). A profile lists rule ids; two providers enforcing the same key
with different words are two rules.

The words live beside the rule object of the key they enforce (``rules/``, a module per
family: its ``words``, its ``detect`` hooks and its ``repair()`` in one class); ``rules``
gathers them into the catalogue, ``rules.RULES``. This module only says what an entry is,
so that the family modules can declare theirs: it imports nothing of the package but
pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Rule", "render", "word"]


class Rule(BaseModel):
    """One provider error, as data."""

    # defer_build: the catalogue (rules/) is the library's own data, made without validation
    # (tests/profiles/test_profiles.py validates every rule); the schema is built only when a
    # rule is validated or dumped, not at start-up.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str
    """The rule's id in providers.md (e.g. ``"OA-1"``)."""
    keys: tuple[str, ...]
    """Canonical keys it enforces (what the checker detects; what the stage repairs)."""
    provider: str
    text: str
    """The error text as the provider words it; ``{i}``, ``{ids}``... are filled in."""
    source: str
    """Evidence: issues/PRs (``owner/repo#N``) and documentation URLs."""
    severity: Literal["error", "warning"] = "error"
    roles: tuple[str, ...] | None = None
    """Only messages of these roles (None: any role the key applies to)."""
    native_index: bool = False
    """``{i}`` counts only non-system messages (Anthropic/Bedrock/Gemini converters)."""
    fixable: bool = True
    """``repair`` with the same profile removes every violation of it (each rule's case in
    tests/profiles/test_check.py shows it: ``check(repair(x)) == []``)."""
    fields: Literal["chat", "mistral"] | None = None
    """A ``fields.unknown`` rule: the table of the fields the provider knows
    (``_content.FIELD_TABLES``); what the checker reports and the encoder removes."""


def word(id: str, keys: str | tuple[str, ...], provider: str, text: str, source: str, **kw: Any) -> Rule:
    """A catalogue entry, as the rule objects declare their words (``rules/``: a key's class
    lists the entries whose first key it is). The library's own data: made without
    validation (tests/profiles/test_profiles.py validates every one)."""
    return Rule.model_construct(id=id, keys=(keys,) if isinstance(keys, str) else keys, provider=provider,
                                text=text, source=source, **kw)


_PLACEHOLDER = re.compile(r"\{(i|j|n|c|id|ids|name|role|field|first|current|previous)\}")


def render(text: str, values: Mapping[str, Any]) -> str:
    """A rule's text with its placeholders filled from ``values``."""
    # Only the known placeholders are filled: provider texts contain other braces (ZP-1's
    # JSON), and an unknown value ({c}: a JSON column we cannot know) stays visible.
    def fill(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if value is None:
            return match.group(0)
        try:
            return str(value)
        except RecursionError:  # an id that is a list nested thousands deep: say so, do not crash
            return f"<{type(value).__name__} nested too deeply to show>"

    return _PLACEHOLDER.sub(fill, text)
