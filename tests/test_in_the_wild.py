"""What real files, real rejected requests and the peers' own test suites showed (issue 15).

One test (or a few) per case of the issue, each pinning the exact output: the messages, the
records, and that a second pass changes nothing. The readers' cases (formats) come first,
then the core's and the profiles'.
"""

from __future__ import annotations

import copy
from typing import Any

import normalizer
from normalizer import Report, check

Message = dict[str, Any]


def repaired(history: list[Message], **options: Any) -> tuple[list[Message], Report]:
    """The repaired history and its report; the input untouched, a second pass a no-op."""
    before = copy.deepcopy(history)
    run = normalizer.repair(history, **options)
    out = list(run)
    assert history == before, "the input must not be mutated"
    again = normalizer.repair(out, **options)
    assert list(again) == out and again.report.records == [], "a second pass must change nothing"
    return out, run.report


def kinds(report: Report) -> list[str]:
    return [r.kind for r in report.records]


# -- 3. a flat tool call {"id", "name", "arguments"} ----------------------------------------------

# The history DeepSeek rejected in a public bug report: the call has its name and arguments at
# its own top level, with no "function" wrapper.
FLAT = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "name": "get_weather", "arguments": '{"city": "Paris"}'}]},
    {"role": "tool", "tool_call_id": "call_0", "content": "18C, cloudy"},
    {"role": "assistant", "content": "It is 18C and cloudy."},
]


def test_a_flat_call_is_lifted_into_its_function_and_keeps_its_result() -> None:
    out, report = repaired(FLAT)
    assert out == [
        FLAT[0],
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        FLAT[2],
        FLAT[3],
    ]
    assert kinds(report) == ["lift_flat_call"]
    assert report.records[0].detail == (
        "call 0 of message 1 had 'name' and 'arguments' outside 'function'; moved them into it (type 'function')"
    )
    assert report.records[0].dropped is None


def test_a_flat_call_with_object_arguments_a_foreign_type_and_extra_keys() -> None:
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function_call", "name": "f", "arguments": {"a": 1}, "id": "c", "index": 0}]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
    ]
    out, report = repaired(history)
    assert out[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}, "index": 0}]}
    assert kinds(report) == ["lift_flat_call", "encode_arguments", "empty_content_to_null"]
    assert report.records[0].dropped == {"type": "function_call"}
    assert out[2] == history[2]


def test_a_call_with_neither_function_nor_name_is_still_dropped() -> None:
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": "hm", "tool_calls": [{"id": "c", "arguments": "{}"}]}]
    out, report = repaired(history)
    assert out == [history[0], {"role": "assistant", "content": "hm"}]
    assert kinds(report) == ["drop_nameless_call"]


# -- 8. text parts flattened with a newline -------------------------------------------------------


def test_text_parts_are_flattened_with_a_newline_in_string_profiles() -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "World"}]}]
    for profile in ("deepseek", "moonshot", "groq", "xai", "jinja-strict", "ollama"):
        out, report = repaired(history, profile=profile)
        assert out == [{"role": "user", "content": "Hello\nWorld"}], profile
        assert "flatten_content" in kinds(report), profile
        assert check(out, profile=profile) == [], profile


def test_flattening_joins_as_the_merge_does_blank_parts_skipped() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "  "}, {"type": "text", "text": "b"}]
    out, _ = repaired([{"role": "user", "content": parts}], profile="deepseek")
    merged, _ = repaired([{"role": "user", "content": "a"}, {"role": "user", "content": "  "},
                          {"role": "user", "content": "b"}], profile="deepseek")
    assert out == merged == [{"role": "user", "content": "a\nb"}]


def test_a_placeholder_stands_between_text_runs_on_their_own_lines() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    history = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": [
            {"type": "text", "text": "one"}, {"type": "text", "text": "two"}, image, {"type": "text", "text": "three"}]},
    ]
    out, report = repaired(history, profile="deepseek")
    assert out[2]["content"] == "one\ntwo\n[image_url omitted: only text can be sent here]\nthree"
    assert report.records[-1].dropped == [image]


# -- 9. the openai profile and image parts in tool messages ---------------------------------------

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/image.png"}}
IMAGE_RESULT = [
    {"role": "user", "content": "Take a screenshot."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "somecall", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "somecall", "content": [{"type": "text", "text": "visible text"}, IMAGE]},
]


def test_openai_check_flags_an_image_in_a_tool_message() -> None:
    [found] = check(IMAGE_RESULT, profile="openai")
    assert (found.index, found.rule, found.key) == (2, "OA-7", "content.text_only")
    assert found.message == (
        "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but this message "
        "with role 'tool' contains an image URL."
    )
    assert check(IMAGE_RESULT) == []  # the default profile keeps the image: lossless


def test_openai_profile_replaces_the_image_of_a_tool_message_by_a_placeholder() -> None:
    out, report = repaired(IMAGE_RESULT, profile="openai")
    assert out == [*IMAGE_RESULT[:2], {"role": "tool", "tool_call_id": "somecall",
                                       "content": "visible text\n[image_url omitted: only text can be sent here]"}]
    [record] = report.records
    assert (record.kind, record.output, record.dropped) == ("replace_non_text_part", 2, [IMAGE])
    assert record.detail == (
        "1 part(s) that are not text (image_url) replaced by a text placeholder: openai accepts only text as the "
        "content of a tool message (the parts are kept whole here)"
    )
    assert check(out, profile="openai") == []


def test_openai_profile_keeps_text_parts_and_user_images() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "what is this?"}, IMAGE]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    out, report = repaired(history, profile="openai")
    assert out == history and report.records == []
    assert check(history, profile="openai") == []
