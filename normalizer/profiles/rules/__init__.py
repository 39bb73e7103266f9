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
every entry, in the order of ``providers.md``'s sections (:data:`_SECTIONS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._rules import Rule
from . import content, fields, reasoning, role, tool
from ._base import HOOKS, KeyRule, Plan, watches

__all__ = ["ALL", "BY_KEY", "KEYS", "RULES", "SERVING_ONLY_KEYS", "KeyRule", "Plan", "Compiled", "compiled", "plan_for", "thinking_only"]

#: Every rule, in walk order.
ALL: tuple[KeyRule, ...] = (*role.RULES, *fields.RULES, *content.RULES, *reasoning.RULES, *tool.RULES)
#: Every rule, by key.
BY_KEY: dict[str, KeyRule] = {rule.key: rule for rule in ALL}
assert len(BY_KEY) == len(ALL), "two rules with one key"

#: The keys of the rules that hold for a request served now, not for a training example
#: (``KeyRule.serving_only``).
SERVING_ONLY_KEYS: frozenset[str] = frozenset(rule.key for rule in ALL if rule.serving_only)

#: The canonical keys, one line each (each rule object's ``summary``), in registry order.
KEYS: dict[str, str] = {rule.key: rule.summary for rule in ALL}

# The catalogue's order: providers.md's sections, each provider's entries by number
# (``MI-9`` before ``MI-10``; a letter after the number orders entries of one number). The
# order "unknown rule" errors list the ids in, and the order of ``chatnorm`` listings.
_SECTIONS: tuple[str, ...] = (
    "OA", "RX",  # OpenAI Chat Completions and Responses (providers.md §1, §2)
    "DS", "MS",  # DeepSeek (§3), Moonshot / Kimi (§4)
    "AN", "BR",  # Anthropic (§5), as reached through OpenAI-shaped converters; Bedrock Converse (§6)
    "GM", "MI",  # Gemini (§7), Mistral (§8; the mistral-common validator is authoritative)
    "GQ", "XA", "QW", "ZP",  # Groq (§9), xAI (§10), Qwen / DashScope (§11), Zhipu GLM / Z.ai (§12)
    "JT", "OL",  # self-hosted chat templates and Ollama (§15)
)
_ID = re.compile(r"([A-Z]+)-(\d+)([a-z]*)")


def _catalogue_order(rule_id: str) -> tuple[int, int, str]:
    match = _ID.fullmatch(rule_id)
    assert match is not None and match.group(1) in _SECTIONS, f"{rule_id}: not a providers.md id of a known section"
    return _SECTIONS.index(match.group(1)), int(match.group(2)), match.group(3)


def _catalogue() -> dict[str, Rule]:
    by_id: dict[str, Rule] = {}
    for rule in ALL:
        for entry in rule.words:
            assert entry.id not in by_id, f"two entries {entry.id}"
            assert entry.keys[0] == rule.key, f"{entry.id} lives with {rule.key}, not with its first key"
            assert all(key in BY_KEY for key in entry.keys), f"{entry.id} names an unknown key"
            by_id[entry.id] = entry
    return {rule_id: by_id[rule_id] for rule_id in sorted(by_id, key=_catalogue_order)}


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
