"""Profiles as data: built-ins, flags, extends, loading from TOML and JSON, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import normalizer
from normalizer.profiles._check import check
from normalizer.profiles import RULES
from normalizer._errors import UsageError
from normalizer.profiles._profiles import PROFILES, Profile, get_profile, load_profile

BUILTINS = ["default", "openai", "deepseek", "moonshot", "anthropic", "bedrock", "gemini", "mistral", "mistral-v3",
            "groq", "xai", "qwen", "zhipu", "jinja-strict", "llama3", "qwen3", "jinja-mapping", "qwen3.5", "gemma",
            "mistral-template", "hermes", "gpt-oss", "ollama", "strict"]


def test_builtins() -> None:
    assert list(PROFILES) == BUILTINS
    for name, profile in PROFILES.items():
        assert profile.name == name and profile.description
        assert all(rule in RULES for rule in profile.rules)


def test_builtins_and_rules_are_what_validation_makes_of_them() -> None:
    # The catalogue is made without validation (start-up builds no schema): each entry must
    # be exactly what pydantic returns for it, validators included (rules known and not
    # repeated, visible placeholders, a coherent system policy), types included (a list
    # where a tuple belongs would compare unequal).
    from normalizer.profiles._rules import Rule

    for profile in PROFILES.values():
        assert Profile.model_validate(profile.model_dump()) == profile, profile.name
        assert Profile(**{k: getattr(profile, k) for k in Profile.model_fields}) == profile
    for rule in RULES.values():
        assert Rule.model_validate(rule.model_dump()) == rule, rule.id
    # derive() validates what it is given, as a profile file does
    with pytest.raises(UsageError, match="tool_only_content"):
        PROFILES["openai"].derive("x", tool_only_content="nothing")


def test_the_rules_in_force_follow_the_fields_not_the_instance() -> None:
    # keys() and active_rules() are computed once per (rules, thinking): a profile copied
    # with other rules, or into thinking mode, gets its own.
    for profile in PROFILES.values():
        thinking = profile.reasoning == "require" and profile.thinking
        active = tuple(r for r in profile.rules
                       if thinking or "reasoning.required_on_tool_turns" not in RULES[r].keys)
        assert profile.active_rules() == active
        assert profile.keys() == frozenset(k for r in active for k in RULES[r].keys)
    base = PROFILES["deepseek"]
    assert base.thinking and "reasoning.required_on_tool_turns" in base.keys()
    off = base.model_copy(update={"thinking": False})
    assert "reasoning.required_on_tool_turns" not in off.keys()
    assert len(off.active_rules()) < len(base.active_rules())
    fewer = base.model_copy(update={"rules": ("MI-1",)})
    assert fewer.active_rules() == ("MI-1",) and fewer.keys() == frozenset(RULES["MI-1"].keys)
    assert base.keys() == PROFILES["deepseek"].keys()  # the original is untouched


def test_get_profile_passes_profiles_through() -> None:
    profile = PROFILES["xai"]
    assert get_profile(profile) is profile
    assert get_profile("xai") is profile


def test_unknown_profile_is_a_usage_error_listing_the_profiles() -> None:
    with pytest.raises(UsageError, match=r"unknown profile 'mistal'; the profiles are: default, openai"):
        get_profile("mistal")
    with pytest.raises(UsageError, match="unknown profile"):
        normalizer.Normalizer(profile="nope")
    with pytest.raises(UsageError, match="must be a name, a path or a Profile"):
        get_profile(42)


def test_flags() -> None:
    on, off = get_profile("deepseek"), get_profile("deepseek:no-thinking")
    assert on.thinking and not off.thinking and off.extends == "deepseek"
    assert "DS-3b" in on.active_rules() and "DS-3b" not in off.active_rules()
    history = [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"}]
    assert "reasoning_content" in list(normalizer.repair(history, profile="deepseek"))[1]
    assert "reasoning_content" not in list(normalizer.repair(history, profile="deepseek:no-thinking"))[1]
    assert get_profile("zhipu:thinking").requires_reasoning()
    with pytest.raises(UsageError, match=r"unknown profile flag 'thinkin'.*the flags are: thinking, first_user"):
        get_profile("zhipu:thinkin")


def test_derive_edits_rules_and_merges_options() -> None:
    base = PROFILES["openai"].derive("a", options={"trailing_calls": "drop"})
    child = base.derive("b", add_rules=["XA-3"], remove_rules=["OA-5"], options={"stub_text": "none"})
    assert child.extends == "a" and "XA-3" in child.rules and "OA-5" not in child.rules
    assert child.options == {"trailing_calls": "drop", "stub_text": "none"}
    assert child.core_options() == child.options


def test_profile_validation() -> None:
    with pytest.raises(UsageError, match="unknown rule 'XX-1'"):
        PROFILES["default"].derive("x", add_rules=["XX-1"])
    with pytest.raises(UsageError, match="placeholder must contain non-whitespace"):
        PROFILES["default"].derive("x", placeholder_user=" ")
    with pytest.raises(UsageError, match="need system messages out of the way"):
        PROFILES["default"].derive("x", alternate=True)
    with pytest.raises(UsageError, match="unknown option 'trailing'"):
        PROFILES["default"].derive("x", options={"trailing": "drop"})
    with pytest.raises(UsageError, match="options.*trailing_calls"):
        PROFILES["default"].derive("x", options={"trailing_calls": "sometimes"})


# -- files

TOML = """\
# A Mistral target that wants a trailing user turn instead of prefix: true
extends = "mistral"
description = "mistral, no prefill"
trailing_assistant = "forbid"
placeholder_continue = "Please go on."
add_rules = ["OA-6a"]

[options]
trailing_calls = "drop"
"""


def test_load_toml(tmp_path: Path) -> None:
    path = tmp_path / "my-mistral.toml"
    path.write_text(TOML)
    profile = load_profile(path)
    assert profile.name == "my-mistral" and profile.extends == "mistral"
    assert profile.trailing_assistant == "forbid" and profile.id_style == "mistral9"
    assert profile.rules == (*PROFILES["mistral"].rules, "OA-6a")
    assert profile.options == {"trailing_calls": "drop"}  # the file's (mistral sets none)
    history = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
               {"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
                                                      "function": {"name": "f", "arguments": "{}"}}]}]
    for ref in (path, str(path)):
        out = normalizer.repair(history, profile=ref)
        assert list(out) == [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"},
                             {"role": "user", "content": "Please go on."}]
        assert out.report.counts["drop_unanswered_call"] == 1  # the profile's core option
        synthetic = [r for r in out.report.records if r.kind == "placeholder_continue"]
        assert [r.output for r in synthetic] == [2]
    assert check(history, profile=path)[0].rule == "MI-4"


def test_load_json_extending_a_file(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(TOML)
    path = tmp_path / "child.json"
    path.write_text(json.dumps({"name": "kid", "extends": "base.toml", "placeholder_continue": "Go.",
                                "remove_rules": ["OA-6a"]}))
    profile = get_profile(str(path))
    assert profile.name == "kid" and profile.extends == "base"
    assert profile.placeholder_continue == "Go." and "OA-6a" not in profile.rules
    assert profile.options == {"trailing_calls": "drop"}  # the file's (mistral sets none)


def test_cycle(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"extends": "b.json"}))
    (tmp_path / "b.json").write_text(json.dumps({"extends": "a.json"}))
    with pytest.raises(UsageError, match="extends itself"):
        load_profile(tmp_path / "a.json")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.toml", 'extends = "mistral"\ntrailing_assistant = forbid\n', r"bad\.toml:2:\d+: invalid TOML"),
        ("bad.json", '{\n  "extends": "mistral",\n  "id_style": \n}', r"bad\.json:4:1: invalid JSON"),
        ("val.toml", 'extends = "mistral"\n\nid_style = "mistral10"\n',
         r"val\.toml:3: profile field 'id_style': Input should be 'keep', 'openai40'"),
        ("val.json", '{\n  "name": "x",\n  "rules": ["OA-1", "ZZ-9"]\n}', r"val\.json:3: profile field 'rules': unknown rule 'ZZ-9'"),
        ("ext.toml", 'extends = "mistrall"\n', r"ext\.toml:1: profile field 'extends': unknown profile 'mistrall'"),
        ("opt.toml", '[options]\ntrailing_calls = "never"\n', r"opt\.toml:1: profile field 'options'"),
        ("typo.toml", 'trailing = "forbid"\n', r"typo\.toml:1: profile field 'trailing': Extra inputs are not permitted"),
        ("list.json", "[1, 2]", r"list\.json:1: a profile file must hold an object"),
        ("p.yaml", "name: x", r"p\.yaml: a profile file must end in \.toml or \.json"),
    ],
)
def test_bad_profile_files_say_where(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        get_profile(path)


def test_missing_file() -> None:
    with pytest.raises(UsageError, match="cannot read profile file nowhere/p.toml"):
        get_profile("nowhere/p.toml")


def test_profiles_are_frozen_data() -> None:
    profile = PROFILES["strict"]
    with pytest.raises(Exception):
        profile.alternate = False  # type: ignore[misc]
    assert Profile.model_validate_json(profile.model_dump_json()) == profile


def test_placeholders_are_configurable_and_recorded() -> None:
    profile = PROFILES["strict"].derive("mine", placeholder_user="(start)", placeholder_continue="Go on.")
    out = normalizer.repair([{"role": "assistant", "content": "hi"}], profile=profile)
    assert list(out) == [{"role": "user", "content": "(start)"}, {"role": "assistant", "content": "hi"},
                         {"role": "user", "content": "Go on."}]
    kinds = {(r.kind, r.output) for r in out.report.records}
    assert kinds == {("placeholder_user", 0), ("placeholder_continue", 2)}
