"""The rules, one object per canonical key, in a module per family (see ``_base``), and the
catalogue gathered from them.

:data:`ALL` is the registry, in walk order (the checker asks the rules at one point of its
walk in this order): role, fields, content, reasoning, tool. A new rule is a class in its
family's module, listed in that module's ``RULES``: its key, its one-line ``summary`` (what
:data:`KEYS` says of it), its providers' ``words`` (the catalogue entries, ``_rules.Rule``),
its ``detect`` hooks and its ``repair()``, side by side. A new provider's entry for a key
that exists is one more of that class's ``words``.

An entry enforcing several keys (``AN-3``: ``tool.orphan_result`` and
``tool.duplicate_result``) lives with its first key (``Rule.keys[0]``, also the key the CLI
shows for its code); the other keys' classes name it in a comment. :data:`RULES` gathers
every entry, in the order of ``providers.md`` (:data:`_ORDER`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._rules import Rule
from . import content, fields, reasoning, role, tool
from ._base import HOOKS, KeyRule, Plan, watches

__all__ = ["ALL", "BY_KEY", "KEYS", "RULES", "KeyRule", "Plan", "Compiled", "compiled", "plan_for", "thinking_only"]

#: Every rule, in walk order.
ALL: tuple[KeyRule, ...] = (*role.RULES, *fields.RULES, *content.RULES, *reasoning.RULES, *tool.RULES)
#: Every rule, by key.
BY_KEY: dict[str, KeyRule] = {rule.key: rule for rule in ALL}
assert len(BY_KEY) == len(ALL), "two rules with one key"

#: The canonical keys, one line each (each rule object's ``summary``), in registry order.
KEYS: dict[str, str] = {rule.key: rule.summary for rule in ALL}

# The catalogue's order, which RULES keeps: providers.md's, provider by provider (the one
# list the catalogue was before its words moved beside their rules; "unknown rule" errors
# list the ids in it). An entry not placed here follows, in registry order: placing it is
# not required.
_ORDER: tuple[str, ...] = (
    # OpenAI Chat Completions (providers.md §1)
    "OA-1", "OA-2", "OA-3", "OA-4", "OA-5", "OA-6a", "OA-6c", "OA-6d", "OA-7", "OA-8", "RX-7",
    # DeepSeek (§3)
    "DS-1", "DS-2", "DS-3a", "DS-3b", "DS-4a", "DS-4b", "DS-5b",
    # Moonshot / Kimi (§4)
    "MS-1", "MS-2", "MS-3", "MS-4",
    # Anthropic (§5), as reached through OpenAI-shaped converters
    "AN-1", "AN-3", "AN-4", "AN-5", "AN-7a", "AN-7b", "AN-8", "AN-9", "AN-10a", "AN-10b", "AN-11", "AN-12", "AN-13",
    "AN-14", "AN-15", "AN-16",
    # Bedrock Converse (§6)
    "BR-1", "BR-2", "BR-3", "BR-5", "BR-6", "BR-8",
    # Gemini (§7)
    "GM-1", "GM-2", "GM-3", "GM-4", "GM-5", "GM-6a", "GM-6b", "GM-7", "GM-9", "GM-10", "GM-11",
    # Mistral (§8; the mistral-common validator is authoritative)
    "MI-1", "MI-2", "MI-3", "MI-4", "MI-5", "MI-6a", "MI-7", "MI-8", "MI-9", "MI-13", "MI-10", "MI-11", "MI-12",
    "MI-14", "MI-15",
    # Groq (§9)
    "GQ-1", "GQ-2", "GQ-3", "GQ-4", "GQ-5",
    # xAI (§10)
    "XA-1", "XA-2", "XA-3",
    # Qwen / DashScope (§11)
    "QW-1", "QW-2", "QW-3",
    # Zhipu GLM / Z.ai (§12)
    "ZP-1", "ZP-2", "ZP-3",
    # Self-hosted chat templates and Ollama (§15)
    "JT-1", "JT-2", "JT-3", "JT-4", "JT-6", "JT-7", "JT-8", "JT-9", "JT-10", "JT-11", "JT-5a", "JT-12", "JT-5b",
    "OL-3", "OL-1", "OL-2",
)


def _catalogue() -> dict[str, Rule]:
    by_id: dict[str, Rule] = {}
    for rule in ALL:
        for entry in rule.words:
            assert entry.id not in by_id, f"two entries {entry.id}"
            assert entry.keys[0] == rule.key, f"{entry.id} lives with {rule.key}, not with its first key"
            assert all(key in BY_KEY for key in entry.keys), f"{entry.id} names an unknown key"
            by_id[entry.id] = entry
    assert by_id.keys() >= set(_ORDER), "an id of _ORDER without an entry"
    return {**{rule_id: by_id[rule_id] for rule_id in _ORDER}, **by_id}


#: Every rule, by id (the catalogue: every rule object's ``words``).
RULES: dict[str, Rule] = _catalogue()


def thinking_only(rule_id: str) -> bool:
    """True when the catalogue entry ``rule_id`` applies only in thinking mode."""
    return any(BY_KEY[key].thinking_only for key in RULES[rule_id].keys)


@dataclass(frozen=True)
class Compiled:
    """A set of rules in force, compiled once (per set: the CLI makes a checker and a
    spelling per file): each rule's entries, the repair plan, and each hook's detectors."""

    words: dict[KeyRule, list[Rule]]
    """The rules in force (registry order), each with its entries in force (profile order)."""
    plan: Plan
    hooks: dict[str, list[Callable[..., None]]]
    """Per hook of ``_base.HOOKS``: the bound detectors of the rules in force that watch it."""


@functools.lru_cache(maxsize=256)
def compiled(active: tuple[str, ...]) -> Compiled:
    """The rules behind the catalogue entries ``active`` (``Profile.active_rules()``)."""
    by_rule: dict[KeyRule, list[Rule]] = {}
    for rule_id in active:
        entry = RULES[rule_id]
        for key in entry.keys:
            by_rule.setdefault(BY_KEY[key], []).append(entry)
    words = {rule: by_rule[rule] for rule in ALL if rule in by_rule}
    plan = Plan()
    for rule, entries in words.items():
        rule.repair(plan, entries)
    hooks: dict[str, list[Callable[..., Any]]] = {
        hook: [getattr(rule, hook) for rule in words if watches(rule, hook)] for hook in HOOKS
    }
    return Compiled(words=words, plan=plan, hooks=hooks)


def plan_for(active: tuple[str, ...]) -> Plan:
    """What the repair does for the catalogue entries ``active`` (read only: shared)."""
    return compiled(active).plan
