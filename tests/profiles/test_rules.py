"""The rule objects (``normalizer.profiles.rules``): one per key, and what they compile to."""

from __future__ import annotations

import normalizer
from normalizer.profiles import KEYS, PROFILES, RULES
from normalizer.profiles.rules import ALL, BY_KEY, compiled
from normalizer.profiles.rules._base import HOOKS, KeyRule, watches


def test_every_key_has_one_rule_object_and_every_rule_one_key() -> None:
    assert [rule.key for rule in ALL] == list(BY_KEY)
    assert set(BY_KEY) == set(KEYS)
    assert len({type(rule) for rule in ALL}) == len(ALL)  # one class each



def test_each_providers_words_live_once_beside_the_rule_of_their_first_key() -> None:
    # The catalogue is gathered from the rule objects: every entry is declared by exactly one
    # of them, the rule of its first key, and KEYS is each rule's own summary.
    declared = [(rule, entry) for rule in ALL for entry in rule.words]
    assert all(entry.keys[0] == rule.key for rule, entry in declared)
    assert sorted(entry.id for _, entry in declared) == sorted(RULES)
    assert all(RULES[entry.id] is entry for _, entry in declared)
    assert KEYS == {rule.key: rule.summary for rule in ALL}
    # An entry for several keys is in force for each: AN-3 lives with tool.orphan_result.
    assert RULES["AN-3"] in BY_KEY["tool.orphan_result"].words
    assert RULES["AN-3"] not in BY_KEY["tool.duplicate_result"].words
    assert RULES["AN-3"].keys == ("tool.orphan_result", "tool.duplicate_result")
    # The catalogue keeps providers.md's sections, each provider's entries by number (the
    # order "unknown rule" errors list the ids in).
    assert list(RULES)[:12] == ["OA-1", "OA-2", "OA-3", "OA-4", "OA-5", "OA-6a", "OA-6c", "OA-6d", "OA-7", "OA-8",
                                "RX-7", "DS-1"]
    mistral = [rule_id for rule_id in RULES if rule_id.startswith("MI-")]
    assert mistral[8:13] == ["MI-9", "MI-10", "MI-11", "MI-12", "MI-13"]
    sections = list(dict.fromkeys(rule_id.split("-")[0] for rule_id in RULES))
    assert sections == ["OA", "RX", "DS", "MS", "AN", "BR", "GM", "MI", "GQ", "XA", "QW", "ZP", "JT", "OL"]
    assert [rule_id for rule_id in RULES if rule_id.startswith("JT-5")] == ["JT-5a", "JT-5b"]

def test_every_rule_detects_somewhere() -> None:
    # A rule no hook asks would never be reported by check.
    for rule in ALL:
        assert any(watches(rule, hook) for hook in HOOKS), rule


def test_a_profile_compiles_its_rules_once_in_walk_order_with_its_entries() -> None:
    for profile in PROFILES.values():
        active = profile.active_rules()
        once = compiled(active)
        assert once is compiled(active)
        assert list(once.words) == [rule for rule in ALL if rule in once.words]
        for rule, entries in once.words.items():
            assert entries == [RULES[r] for r in active if rule.key in RULES[r].keys]
        for hook, detectors in once.hooks.items():
            assert [d.__self__ for d in detectors] == [r for r in once.words if watches(r, hook)]


def test_the_checker_reports_each_rule_in_its_entries_words() -> None:
    # MI-4 (tool.id_format) in mistral's words, with the rule object's key.
    found = normalizer.check([{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "r"}], profile="mistral")
    assert [(v.rule, v.key) for v in found] == [("MI-4", "tool.id_format")]
    assert isinstance(BY_KEY["tool.id_format"], KeyRule)


def test_what_an_encoder_derives_from_its_rules_is_computed_once_and_right_for_every_profile() -> None:
    # The roles of the content rules and the known fields per event are compiled once per set
    # of rules in force and of exempt fields (the CLI makes an encoder per conversation): each
    # still equals what the profile's own rules give, and a cached table is shared, never rebuilt.
    from normalizer._content import FIELD_TABLES, field_table, known_fields
    from normalizer.profiles._encode import _ALL_ROLES, Spelling, field_tables, known_reasoning
    from normalizer.profiles._profiles import PROFILES
    from normalizer.profiles import RULES
    from normalizer.profiles.rules import plan_for

    def roles(profile: normalizer.profiles.Profile, key: str) -> frozenset[str]:
        return frozenset(role for rule in profile.active_rules() if key in RULES[rule].keys
                         for role in (RULES[rule].roles or _ALL_ROLES))

    for profile in PROFILES.values():
        plan = plan_for(profile.active_rules())
        assert plan is plan_for(profile.active_rules())
        assert plan.string_roles == roles(profile, "content.string_only"), profile.name
        assert plan.text_roles == roles(profile, "content.text_only"), profile.name
        exempt = known_reasoning(profile)
        tables = sorted({RULES[r].fields or "chat" for r in profile.active_rules() if "fields.unknown" in RULES[r].keys})
        assert field_tables(profile) == (tuple(tables) or ("chat",))
        table = field_table(tables or ["chat"])
        assert table == FIELD_TABLES["mistral" if "MI-14" in profile.active_rules() else "chat"]
        one, two = Spelling(profile), Spelling(profile)
        assert one._fields == table
        assert one._known == {role: known_fields(role, exempt, table) for role in _ALL_ROLES}
        assert one._known is two._known
        assert one._seen_ids is not two._seen_ids  # the state is each encoder's own



def test_a_rule_step_of_its_own_runs_on_every_shaped_message_before_unknown_fields_go() -> None:
    # Plan.message_steps: a rule whose repair is none of the spelling's own steps brings one.
    from typing import Any

    from normalizer._note import Note
    from normalizer.profiles._encode import Spelling

    def step(m: dict[str, Any], role: str, profile: Any, inputs: list[int], notes: list[Note]) -> dict[str, Any]:
        if role == "tool" and m.get("content") == "":
            notes.append(Note("fill_tool_content", "empty tool content became '-'", inputs, None))
            return {**m, "content": "-", "extra": 1}
        return m

    spelling = Spelling(PROFILES["mistral"])
    spelling._steps = (step,)
    notes: list[Note] = []
    shaped = spelling.shape({"role": "tool", "tool_call_id": "a", "content": ""}, "tool", [3], notes)
    assert shaped == {"role": "tool", "tool_call_id": "a", "content": "-"}  # 'extra' is unknown to Mistral
    assert [n.kind for n in notes][0] == "fill_tool_content"
    kept = {"role": "tool", "tool_call_id": "a", "content": "r"}
    assert spelling.shape(kept, "tool", [4], []) is kept


def test_serving_only_keys_are_the_rules_that_say_so() -> None:
    # Declared once, on the rule classes; `check --purpose training` reads the derived set.
    from normalizer.profiles.rules import SERVING_ONLY_KEYS

    assert SERVING_ONLY_KEYS == {"role.last_user_or_tool", "content.final_assistant_trailing_ws"}
    assert {rule.key for rule in ALL if rule.serving_only} == SERVING_ONLY_KEYS
