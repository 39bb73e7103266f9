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
from normalizer.profiles._profiles import PROFILES, make_stage
from normalizer._note import Note
from normalizer.profiles._encode import Spelling

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


def _speakers(history: list[dict[str, Any]]) -> Any:
    """``history`` with a ``name`` drawn for each of its user, assistant and system messages."""
    return st.tuples(*(name for _ in history)).map(lambda names: [
        _with(m, name=n) if m["role"] != "tool" else m for m, n in zip(history, names)])


#: The histories above with speakers: two assistants (or users) of different names are two
#: turns, until a profile whose provider knows no ``name`` (mistral) removes the names.
#: (Not in ``histories`` itself: the judged corpus is a derandomized draw of those.)
named_histories = histories.flatmap(_speakers)


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


@pytest.mark.parametrize(
    "name", ALL + CUSTOM, ids=lambda p: p if isinstance(p, str) else p.name,
)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=named_histories)
def test_repair_of_named_speakers_satisfies_check_and_is_idempotent(name: str, history: list[dict[str, Any]]) -> None:
    # mistral removes every name but a tool message's (MI-14): two speakers' messages side by
    # side become one speaker's, and merge in the first pass as the second would merge them.
    once = repair(copy.deepcopy(history), name)
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
    staged = sorted(n for n, p in PROFILES.items() if make_stage(p, Spelling(p), lambda m, notes: None) is not None)
    assert staged == ["anthropic", "bedrock", "gemini", "gemma", "gpt-oss", "hermes", "jinja-mapping", "jinja-strict",
                      "llama3", "mistral", "mistral-template", "mistral-v3", "qwen", "qwen3", "qwen3.5", "strict", "zhipu"]


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


def test_leading_systems_merge_keeps_every_key() -> None:
    history = [{"role": "system", "content": "a", "name": "x"},
               {"role": "system", "content": "b", "name": "ops", "cache_control": {"type": "ephemeral"}},
               {"role": "user", "content": "q"}]
    stream = normalizer.repair(history, profile="jinja-strict")
    out = list(stream)
    assert out[0] == {"role": "system", "content": "a\nb", "name": "ops", "cache_control": {"type": "ephemeral"}}
    assert [r.dropped for r in stream.report.records if r.kind == "merge_conflict"] == [{"name": "x"}]


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
    assert once[:2] == [{"role": "user", "content": "."},  # MI-7: a conversation starts with a user
                        {"role": "assistant", "content": "hi\nhi"}]


@pytest.mark.parametrize("profile", ["qwen", "zhipu", "qwen:thinking"])
def test_calls_left_open_with_a_user_required_are_a_fixed_point(profile: str) -> None:
    history = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
    once = list(normalizer.repair(copy.deepcopy(history), profile=profile, trailing_calls="keep"))
    assert [m["role"] for m in once] == ["assistant"]  # no user after open calls
    assert list(normalizer.repair(once, profile=profile, trailing_calls="keep")) == once


# -- the stage's fast path: a placed history's tool, user and assistant messages skip the
# copy of their notes and (tool messages) the _put call; what comes out must be what _put
# makes of them.

_PLACED = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c}, text),
    st.builds(lambda c, n: _with({"role": "assistant", "content": c}, name=n), text, name),
    st.builds(lambda k: {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, st.integers(0, 3)),
    st.builds(lambda k: {"role": "tool", "tool_call_id": f"c{k}", "content": "ok"}, st.integers(0, 3)),
)


@pytest.mark.parametrize("profile", [p for p in ALL if make_stage(PROFILES[p], Spelling(PROFILES[p]), lambda m, n: None)])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=st.lists(st.tuples(_PLACED, st.booleans()), max_size=12))
def test_fast_path_places_as_put_does(profile: str, messages: list[tuple[dict[str, Any], bool]]) -> None:
    def run(through_put: bool) -> list[tuple[Any, list[tuple[str, Any]]]]:
        out: list[tuple[Any, list[tuple[str, Any]]]] = []
        stage = make_stage(PROFILES[profile], Spelling(PROFILES[profile]),
                           lambda m, n: out.append((m, [(note.kind, note.dropped) for note in n])))
        assert stage is not None
        stage.feed({"role": "user", "content": "start"}, None)  # placed from here on
        for message, with_note in messages:
            notes = [Note("x", "a note of the core", [0], None)] if with_note else None
            if through_put:  # the way every message went before the fast path
                stage._put(message, list(notes) if notes else [])
            else:
                stage.feed(message, notes)
        stage.close()
        return out

    assert run(through_put=False) == run(through_put=True)
