"""The rules, one object per canonical key, in a module per family (see ``_base``).

:data:`ALL` is the registry, in walk order (the checker asks the rules at one point of its
walk in this order): role, fields, content, reasoning, tool. A new rule is a class in its
family's module, listed in that module's ``RULES``; its key and one-line summary go in
``_rules.KEYS``, its providers' words in ``_rules``' catalogue.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._rules import KEYS, RULES, Rule
from . import content, fields, reasoning, role, tool
from ._base import HOOKS, KeyRule, Plan, watches

__all__ = ["ALL", "BY_KEY", "KeyRule", "Plan", "Compiled", "compiled", "plan_for", "thinking_only"]

#: Every rule, in walk order.
ALL: tuple[KeyRule, ...] = (*role.RULES, *fields.RULES, *content.RULES, *reasoning.RULES, *tool.RULES)
#: Every rule, by key.
BY_KEY: dict[str, KeyRule] = {rule.key: rule for rule in ALL}
assert len(BY_KEY) == len(ALL), "two rules with one key"
assert BY_KEY.keys() == KEYS.keys(), "a key without a rule, or a rule without a key"


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
