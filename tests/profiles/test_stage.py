"""The profile stage: for every built-in profile, repair leaves nothing for check to flag,
and repairing twice changes nothing; plus the id rewrite and the stage's contract."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalizer
from normalizer.profiles._check import check
from normalizer.profiles._profiles import PROFILES, get_profile, make_stage
from normalizer.profiles._encode import Encoder, base62, mistral_id

ALL = list(PROFILES)

# -- messy histories: split turns, missing/orphan/reordered results, interleaved users,
# empty contents, systems mid-history, reasoning, bad ids and names

IDS = ["call_1", "call_2", "c3", "toolu_01.x", "functions.get:0", "call_" + "x" * 45]
TEXTS = ["hi", "", "  ", "hello world ", "ok", "a\n"]

text = st.sampled_from(TEXTS)
IMAGES = [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}, {"image_url": {"url": "http://x/b.png"}}]
part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, text),
    st.builds(lambda t: {"text": t}, text),  # no type
    st.sampled_from(IMAGES),  # typed, and untyped (an image all the same: never flattened away)
)
content = st.one_of(st.none(), text, st.lists(part, max_size=3))
name = st.sampled_from([None, None, "alice", "bob", "bad name!"])


@st.composite
def call(draw: Any, call_id: str | None = None) -> dict[str, Any]:
    return {
        "id": call_id if call_id is not None else draw(st.sampled_from(IDS)),
        "type": "function",
        "function": {
            "name": draw(st.sampled_from(["f", "get_weather"])),
            "arguments": draw(st.sampled_from(["{}", "", '{"a": 1}'])),
        },
    }


def _with(message: dict[str, Any], **optional: Any) -> dict[str, Any]:
    return {**message, **{k: v for k, v in optional.items() if v is not None}}


@st.composite
def system(draw: Any) -> dict[str, Any]:
    return {"role": draw(st.sampled_from(["system", "developer"])), "content": draw(st.sampled_from(["be brief", "rules"]))}


@st.composite
def user(draw: Any) -> dict[str, Any]:
    return _with({"role": "user", "content": draw(content)}, name=draw(name))


@st.composite
def assistant(draw: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": draw(content)}
    kind = draw(st.sampled_from(["text", "calls", "calls", "empty_calls"]))
    if kind == "calls":
        msg["tool_calls"] = draw(st.lists(call(), min_size=1, max_size=3))
    elif kind == "empty_calls":
        msg["tool_calls"] = []
    if draw(st.booleans()):
        msg["reasoning_content"] = draw(st.sampled_from(["thinking...", ""]))
    return msg


@st.composite
def tool(draw: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "tool", "content": draw(st.one_of(text, st.lists(part, max_size=2)))}
    if draw(st.integers(0, 5)):
        msg["tool_call_id"] = draw(st.sampled_from(IDS))
    return msg


@st.composite
def exchange(draw: Any) -> list[dict[str, Any]]:
    """A turn with calls and (some of) its results, possibly reordered, with a user in between."""
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True))
    turn = {"role": "assistant", "content": draw(content), "tool_calls": [draw(call(i)) for i in ids]}
    results = [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in ids if draw(st.integers(0, 4))]
    results = draw(st.permutations(results))
    out = [turn, *results]
    if draw(st.booleans()) and len(out) > 1:
        out.insert(draw(st.integers(1, len(out))), draw(user()))
    return out


message = st.one_of(system(), user(), assistant(), tool())
histories = st.lists(st.one_of(message.map(lambda m: [m]), exchange()), max_size=8).map(
    lambda chunks: [m for chunk in chunks for m in chunk]
)


def repair(messages: list[dict[str, Any]], profile: Any) -> list[dict[str, Any]]:
    return list(normalizer.repair(messages, profile=profile))


# Built-ins, their flags, and custom profiles exercising the other encodings and modes.
CUSTOM = [
    PROFILES["jinja-strict"].derive("gemma", system="fold", remove_rules=["JT-3"], add_rules=["JT-2"]),
    PROFILES["default"].derive("o1-mini", system="fold", add_rules=["OA-8"], tool_only_content="omit"),
    PROFILES["openai"].derive("responses", id_style="responses64", remove_rules=["OA-5"], add_rules=["RX-7"]),
    PROFILES["anthropic"].derive("claude-4.5", trailing_assistant="allow", remove_rules=["AN-11"]),
    PROFILES["mistral"].derive("mistral-forbid", trailing_assistant="forbid"),
]


@pytest.mark.parametrize(
    "name", ALL + ["deepseek:no-thinking", "zhipu:thinking", "qwen:thinking"] + CUSTOM,
    ids=lambda p: p if isinstance(p, str) else p.name,
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories)
def test_repair_satisfies_check_and_is_idempotent(name: str, history: list[dict[str, Any]]) -> None:
    original = copy.deepcopy(history)
    once = repair(history, name)
    assert history == original, "the stage must not mutate its input"
    assert check(once, profile=name) == []
    assert repair(once, name) == once


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=60, deadline=None)
@given(history=histories)
def test_repair_without_validation_does_not_mutate(name: str, history: list[dict[str, Any]]) -> None:
    original = copy.deepcopy(history)
    list(normalizer.repair(history, profile=name, validate=False))
    assert history == original


def test_only_profiles_with_rules_across_messages_have_a_stage() -> None:
    # The encoding of each message is the core's (one pass); the stage is only for where
    # messages stand: system placement, alternation, boundaries.
    staged = sorted(n for n, p in PROFILES.items() if make_stage(p, Encoder(p)) is not None)
    assert staged == ["anthropic", "bedrock", "gemini", "jinja-strict", "mistral", "qwen", "strict", "zhipu"]


# -- ids


def test_mistral_ids_are_nine_alphanumerics_and_unique() -> None:
    ids = [mistral_id(n) for n in range(200_000)]
    assert all(len(i) == 9 and i.isalnum() and i.isascii() for i in ids)
    assert len(set(ids)) == len(ids)


def test_base62() -> None:
    assert base62(0) == "0" and base62(61) == "z" and base62(62) == "10" and base62(5, 3) == "005"


def _turns(n: int) -> list[dict[str, Any]]:
    """n turns that all reuse the same two original ids (as mistral-small does)."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for k in range(n):
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": "abc123XYZ", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ]})
        out.append({"role": "tool", "tool_call_id": "call_2", "content": f"g{k}"})
        out.append({"role": "tool", "tool_call_id": "abc123XYZ", "content": f"f{k}"})
        out.append({"role": "assistant", "content": f"done {k}"})
        out.append({"role": "user", "content": "again"})
    return out


def test_mistral_rewrite_same_on_call_and_result_and_unique_across_turns() -> None:
    out = repair(_turns(2_000), "mistral")
    call_ids = []
    for i, m in enumerate(out):
        if m.get("tool_calls"):
            ids = [c["id"] for c in m["tool_calls"]]
            call_ids += ids
            assert all(len(x) == 9 and x.isalnum() for x in ids)
            results = [r["tool_call_id"] for r in out[i + 1 : i + 1 + len(ids)]]
            assert results == ids  # results follow in call order, with the same ids
            assert [r["content"][0] for r in out[i + 1 : i + 3]] == ["f", "g"]
    assert len(call_ids) == 4_000 and len(set(call_ids)) == 4_000
    assert check(out, profile="mistral") == []
    assert repair(out, "mistral") == out


@pytest.mark.parametrize("name", ["anthropic", "zhipu", "strict"])
def test_unique_styles_across_turns(name: str) -> None:
    out = repair(_turns(300), name)
    ids = [c["id"] for m in out for c in m.get("tool_calls") or ()]
    assert len(ids) == 600 and len(set(ids)) == 600
    assert check(out, profile=name) == []


def test_anthropic_ids_keep_their_origin_readable() -> None:
    out = repair([{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
        {"id": "functions.get:0", "type": "function", "function": {"name": "get", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "functions.get:0", "content": "r"}], "anthropic")
    assert out[1]["tool_calls"][0]["id"] == "functions_get_0_0"
    assert out[2]["tool_call_id"] == "functions_get_0_0"


def test_openai_clamps_only_long_ids() -> None:
    long = "call_" + "x" * 60
    out = repair([{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [
        {"id": long, "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "short", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": long, "content": "r"},
        {"role": "tool", "tool_call_id": "short", "content": "r"}], "openai")
    new = out[1]["tool_calls"][0]["id"]
    assert len(new) <= 40 and new.startswith("call_") and out[2]["tool_call_id"] == new
    assert out[1]["tool_calls"][1]["id"] == "short"


def _images(value: Any) -> int:
    """How many image parts (typed or not; the stage may add the type) ``value`` holds, at any depth."""
    if isinstance(value, dict):
        if "image_url" in value:
            return 1
        return sum(_images(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_images(v) for v in value)
    return 0


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories)
def test_no_part_that_is_not_text_is_lost_without_a_record(name: str, history: list[dict[str, Any]]) -> None:
    stream = normalizer.repair(copy.deepcopy(history), profile=name)
    out = list(stream)
    kept = _images(out) + sum(_images(r.dropped) for r in stream.report.records)
    assert kept >= _images(history)


@pytest.mark.parametrize("name", ["deepseek", "groq", "ollama"])
def test_string_only_replaces_a_non_text_part_and_keeps_it_in_the_report(name: str) -> None:
    image = {"type": "image_url", "image_url": {"url": "u"}}
    history = [{"role": "user", "content": "a"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "see:"}, image]}]
    stream = normalizer.repair(history, profile=name)
    out = list(stream)
    assert out[2]["content"] == "see:\n[image_url omitted: only text can be sent here]"
    (record,) = [r for r in stream.report.records if r.kind == "replace_non_text_part"]
    assert record.dropped == [image] and record.output == 2
    assert check(out, profile=name) == []


def test_string_preferred_keeps_a_list_with_an_image() -> None:
    image = {"image_url": {"url": "u"}}  # untyped: still an image
    history = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"text": "b"}, image]}]
    assert list(normalizer.repair(history, profile="deepseek"))[0]["content"] == history[0]["content"]
    out = list(normalizer.repair(history, profile="xai"))  # one text element per message
    assert out[0]["content"] == [{"type": "text", "text": "ab"}, image]
    assert check(out, profile="xai") == []


def test_an_assistant_message_empty_once_shaped_is_dropped_with_its_repairs_recorded() -> None:
    # [{"foo": 1}] is content (a part that is not text) until openai's part typing makes it
    # an empty text part: then the message carries nothing, and is dropped whole.
    stream = normalizer.repair([{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"foo": 1}]}],
                               profile="openai")
    assert list(stream) == [{"role": "user", "content": "q"}]
    assert [(r.kind, r.input, r.output) for r in stream.report.records] == [
        ("add_part_type", [1], None), ("drop_empty_assistant", [1], None)]
    assert stream.report.records[1].dropped == {"role": "assistant", "content": [{"type": "text", "foo": 1}]}


def test_leading_systems_merge_keeps_every_key() -> None:
    history = [{"role": "system", "content": "a", "name": "x"},
               {"role": "system", "content": "b", "name": "ops", "cache_control": {"type": "ephemeral"}},
               {"role": "user", "content": "q"}]
    stream = normalizer.repair(history, profile="jinja-strict")
    out = list(stream)
    assert out[0] == {"role": "system", "content": "a\nb", "name": "ops", "cache_control": {"type": "ephemeral"}}
    assert [r.dropped for r in stream.report.records if r.kind == "merge_conflict"] == [{"name": "x"}]


@pytest.mark.parametrize("name", ["gemini", "strict"])
def test_results_of_an_opaque_turn_get_their_function_name(name: str) -> None:
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": None, "codex_reasoning_items": [{"id": "r"}], "tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    out = repair(history, name)
    assert out[1] == history[1] and out[2]["name"] == "ls" and out[2]["tool_call_id"] == "call_1"


_OBJECT_ARGS_HISTORY = [
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": [1, 2.5]}}}]},
    {"role": "tool", "tool_call_id": "c", "content": "r"},
]


def test_the_encoding_is_applied_once_so_what_the_provider_wants_already_is_not_touched() -> None:
    # Ollama wants object arguments and "" next to calls: this history is already so.
    stream = normalizer.repair(copy.deepcopy(_OBJECT_ARGS_HISTORY), profile="ollama")
    assert list(stream) == _OBJECT_ARGS_HISTORY
    assert stream.report.records == [] and not stream.report.changed


@pytest.mark.parametrize("name", ["xai", "groq"])
def test_the_encoding_records_only_what_changed(name: str) -> None:
    # xAI and Groq want "" next to calls (kept) and arguments as a JSON string (encoded).
    stream = normalizer.repair(copy.deepcopy(_OBJECT_ARGS_HISTORY), profile=name)
    out = list(stream)
    assert out[1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":[1,2.5]}'}}]}
    assert [(r.kind, r.input, r.output) for r in stream.report.records] == [("encode_arguments", [1], 1)]


def test_object_arguments_are_decoded_once_for_ollama() -> None:
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
                   {"id": "d", "type": "function", "function": {"name": "g", "arguments": ""}},
                   {"id": "e", "type": "function", "function": {"name": "h", "arguments": "not json"}}]},
               {"role": "tool", "tool_call_id": "c", "content": "r"},
               {"role": "tool", "tool_call_id": "d", "content": "s"},
               {"role": "tool", "tool_call_id": "e", "content": "t"}]
    stream = normalizer.repair(history, profile="ollama")
    out = list(stream)
    assert [c["function"]["arguments"] for c in out[1]["tool_calls"]] == [{"a": 1}, {}, "not json"]
    assert out[1]["content"] == ""
    assert [(r.kind, r.dropped) for r in stream.report.records] == [
        ("decode_arguments", {"id": "c", "arguments": '{"a": 1}'}),
        ("default_arguments", {"id": "d", "arguments": ""}),
        ("encode_tool_only_content", {"content": None}),
    ]
    assert list(normalizer.repair(out, profile="ollama")) == out


def test_requires_user_placeholder_waits_for_open_calls() -> None:
    history = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
    kept = list(normalizer.repair(history, profile="qwen", trailing_calls="keep"))
    assert kept == history  # calls left open: no user after them (the next pass would stub them)
    stubbed = list(normalizer.repair(history, profile="qwen"))
    assert [m["role"] for m in stubbed] == ["assistant", "tool", "user"]


def _opaque(chunk: list[dict[str, Any]], marker: str) -> list[dict[str, Any]]:
    first = chunk[0]
    if first["role"] != "assistant":
        return chunk
    state = "incomplete" if marker == "finish_reason" else [{"id": "rs_1"}]
    return [{**first, marker: state}, *chunk[1:]]


opaque_histories = st.lists(
    st.tuples(st.one_of(message.map(lambda m: [m]), exchange()),
              st.sampled_from([None, "finish_reason", "codex_reasoning_items", "codex_message_items"])),
    max_size=6,
).map(lambda chunks: [m for chunk, marker in chunks for m in (_opaque(chunk, marker) if marker else chunk)])


@pytest.mark.parametrize("name", ALL + ["qwen:thinking", "zhipu:thinking"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=opaque_histories)
def test_repair_with_opaque_turns_satisfies_check_and_is_idempotent(name: str, history: list[dict[str, Any]]) -> None:
    """Opaque turns are replayed as stored; check exempts them from the rules no repair may apply."""
    once = repair(copy.deepcopy(history), name)
    assert check(once, profile=name) == []
    assert repair(once, name) == once


def test_mistral_text_then_text_and_calls_is_a_fixed_point() -> None:
    # Found by hypothesis: the core keeps text and calls apart for Mistral, the stage splits
    # "text + calls"; the split's text half must merge into the text turn before it.
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    history = [{"role": "assistant", "content": "hi"},
               {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "assistant", "content": "hi", "tool_calls": [call]}]
    once = list(normalizer.repair(history, profile="mistral"))
    assert list(normalizer.repair(once, profile="mistral")) == once
    assert normalizer.check(once, profile="mistral") == []
    assert once[0] == {"role": "assistant", "content": "hi\nhi"}
