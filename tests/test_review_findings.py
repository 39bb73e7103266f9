"""Confirmed bugs found in review. Each test is a minimal reproduction, marked xfail(strict)
so the suite stays green; un-xfail a test when its bug is fixed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import normalizer
from normalizer import LimitExceeded, check, repair


def _call(call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _repair(messages: list[dict[str, Any]], **options: Any) -> tuple[list[dict[str, Any]], normalizer.Report]:
    stream = repair(copy.deepcopy(messages), **options)
    out = list(stream)
    return out, stream.report


# ---------------------------------------------------------------- data lost without a record


@pytest.mark.parametrize("profile", ["deepseek", "groq", "xai", "ollama", "jinja-strict"])
def test_untyped_image_part_is_not_flattened_away(profile: str) -> None:
    image = {"image_url": {"url": "http://x/cat.png"}}  # the core counts it as an image (non-text) part
    history = [{"role": "user", "content": [{"type": "text", "text": "look"}, image]},
               {"role": "assistant", "content": "ok"}]
    out, report = _repair(history, profile=profile)
    kept = image in (out[0]["content"] if isinstance(out[0]["content"], list) else [])
    recorded = any(image in (r.dropped if isinstance(r.dropped, list) else [r.dropped]) for r in report.records)
    assert kept or recorded


def test_stage_dropped_final_assistant_is_recorded() -> None:
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [_call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "assistant", "content": [{"foo": 1}]},  # content for the core; blank once typed by the stage
    ]
    out, report = _repair(history, profile="openai")
    assert len(out) == 4 or any(r.kind == "drop_empty_assistant" for r in report.records)


def test_merge_keeps_or_records_later_reasoning_object() -> None:
    history = [{"role": "assistant", "content": "x", "reasoning": {"effort": "high"}},
               {"role": "assistant", "content": "y", "reasoning": {"effort": "low"}}]
    out, report = _repair(history)
    assert len(out) == 1
    later = {"effort": "low"}
    assert out[0].get("reasoning") == later or any(
        r.kind == "merge_conflict" and r.dropped in ({"reasoning": later}, {"reasoning": {"effort": "high"}})
        for r in report.records
    )


def test_leading_system_merge_keeps_or_records_other_keys() -> None:
    history = [{"role": "system", "content": "a"},
               {"role": "system", "content": "b", "name": "ops", "cache_control": {"type": "ephemeral"}},
               {"role": "user", "content": "q"},
               {"role": "assistant", "content": "r"}]
    out, report = _repair(history, profile="jinja-strict")
    assert out[0].get("cache_control") == {"type": "ephemeral"} or any(
        isinstance(r.dropped, dict) and "cache_control" in r.dropped for r in report.records
    )


# ---------------------------------------------------------------- not a fixed point


def test_dropping_named_empty_assistant_keeps_fixed_point() -> None:
    history = [{"role": "assistant", "content": "x"},
               {"role": "assistant", "name": "bob", "content": ""},
               {"role": "assistant", "content": "y"}]
    once, _ = _repair(history)
    twice, _ = _repair(once)
    assert twice == once


@pytest.mark.parametrize("profile", ["qwen", "zhipu", "qwen:thinking"])
def test_trailing_keep_with_requires_user_profile_is_fixed_point(profile: str) -> None:
    history = [{"role": "assistant", "content": None, "tool_calls": [_call("a")]}]
    once, _ = _repair(history, profile=profile, trailing_calls="keep")
    twice, _ = _repair(once, profile=profile, trailing_calls="keep")
    assert twice == once


# ---------------------------------------------------------------- check(profile, repair(profile, x)) not empty


@pytest.mark.parametrize("profile", ["gemini", "strict"])
def test_results_of_opaque_turn_get_function_name(profile: str) -> None:
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": None, "tool_calls": [_call("call_1", "ls")],
                "codex_reasoning_items": [{"id": "r"}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    out, _ = _repair(history, profile=profile)
    assert check(out, profile=profile) == []


def test_opaque_turn_with_empty_tool_calls_passes_default_check() -> None:
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": "partial", "tool_calls": [], "finish_reason": "incomplete"}]
    out, _ = _repair(history)
    assert check(out) == []


@pytest.mark.parametrize("profile, extra", [
    ("deepseek", {"tool_calls": [_call("a")]}),
    ("moonshot", {"tool_calls": [_call("a")]}),
    ("groq", {"reasoning_content": "r"}),
])
def test_opaque_turn_reasoning_rules_pass_check(profile: str, extra: dict[str, Any]) -> None:
    assistant = {"role": "assistant", "content": None if "tool_calls" in extra else "partial",
                 "finish_reason": "incomplete", **extra}
    history = [{"role": "user", "content": "q"}, assistant]
    if "tool_calls" in extra:
        history.append({"role": "tool", "tool_call_id": "a", "content": "r"})
    history.append({"role": "user", "content": "go on"})
    out, _ = _repair(history, profile=profile)
    assert check(out, profile=profile) == []


def test_xai_single_text_element_is_repaired() -> None:
    image = {"type": "image_url", "image_url": {"url": "u"}}
    history = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, image]},
               {"role": "assistant", "content": "ok"}]
    out, _ = _repair(history, profile="xai")
    assert check(out, profile="xai") == []


@pytest.mark.parametrize("profile", ["deepseek", "groq", "ollama"])
def test_string_only_profiles_pass_check_with_image_tool_result(profile: str) -> None:
    image = {"type": "image_url", "image_url": {"url": "u"}}
    history = [{"role": "user", "content": "a"},
               {"role": "assistant", "content": None, "tool_calls": [_call("c")]},
               {"role": "tool", "tool_call_id": "c", "content": [image]}]
    out, _ = _repair(history, profile=profile)
    assert check(out, profile=profile) == []


# ---------------------------------------------------------------- limits / memory


def test_held_bytes_do_not_accumulate_across_released_users() -> None:
    history = []
    for _ in range(50):
        history += [{"role": "user", "content": "x" * 10}, {"role": "user", "content": "y" * 10},
                    {"role": "system", "content": "s"}]
    try:
        out, _ = _repair(history, max_held_bytes=200)
    except LimitExceeded as exc:  # pragma: no cover - the bug
        pytest.fail(f"limit hit on a history whose pending message never exceeds ~40 chars: {exc}")
    assert len(out) == 100


# ---------------------------------------------------------------- report accuracy


def test_second_result_for_last_call_is_a_duplicate() -> None:
    history = [{"role": "assistant", "content": None, "tool_calls": [_call("a")]},
               {"role": "tool", "tool_call_id": "a", "content": "1"},
               {"role": "tool", "tool_call_id": "a", "content": "2"}]
    _, report = _repair(history)
    assert report.counts.get("drop_duplicate_result") == 1


@pytest.mark.parametrize("profile", [
    "mistral",
    "ollama",
])
def test_repairing_repaired_history_reports_nothing(profile: str) -> None:
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": "Let me look.", "tool_calls": [_call("call_0", "ls")]},
               {"role": "tool", "tool_call_id": "call_0", "content": "a.txt"},
               {"role": "user", "content": "thanks"}]
    once, _ = _repair(history, profile=profile)
    twice, report = _repair(once, profile=profile)
    assert twice == once
    assert not report.changed, report.counts


# ---------------------------------------------------------------- adapters


def test_sync_close_before_iteration_closes_source() -> None:
    class Source:
        closed = False

        def __iter__(self) -> Source:
            return self

        def __next__(self) -> dict[str, Any]:
            return {"role": "user", "content": "a"}

        def close(self) -> None:
            self.closed = True

    source = Source()
    stream = repair(source)
    stream.close()
    assert source.closed
