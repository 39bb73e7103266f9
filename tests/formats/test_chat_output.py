"""Chat output holds the keys of the Chat Completions schema, and no key of ours (issue 39 item 1).

Every chat output -- of every sample file, every peer case and seeded hypothesis histories,
under every profile -- is walked against the OpenAI SDK's ``ChatCompletionMessageParam``
TypedDicts with no extra key allowed (``chat_schema.extra_keys``): on a message, a call, a
call's ``function``, a content part and what a part holds. What may be there besides:

* the reasoning keys, where the profile sends reasoning (``reasoning`` is not ``"strip"``):
  ``reasoning_content``, ``reasoning``, ``reasoning_details``, and the reasoning kept whole
  for its replay, ``thinking_blocks`` (LiteLLM's key for Anthropic's signed blocks),
  ``reasoning_items`` (a Responses reasoning item, encrypted content and all) and
  ``thought_parts`` (Gemini's thought parts, signatures and all);
* a key the profile adds by its own declared trait: ``prefix`` (``trailing_assistant:
  prefix``, Mistral's), a tool message's ``name`` where a rule of the profile fills it
  (``tool.response_name``: Gemini's functionResponse names its function);
* a key the caller's own chat messages carried (a chat file's or a peer case's), which the
  repair passes on as it does any key it does not own: the library adds none of its own.

The fields a reader keeps aside for a writer of the source format (``source_fields``: a
Responses item's ``id`` and ``status``, Gemini's part fields, Cline's ``ts``...) are never
in chat output: they ride beside it to that writer (``test_round_trips_keep_the_source_fields``).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings

import normalizer
from normalizer import get_profile
from normalizer.profiles import RULES
from normalizer._content import REASONING_KEYS
from normalizer.formats import aread_messages, awrite_responses, read_conversations, read_messages, write_jsonl, write_responses

from realdata import PEER_CASES, SAMPLES, SKIP_REASON
from test_properties import histories

pytest.importorskip("openai", reason="the OpenAI SDK's TypedDicts are the judge: pip install -e '.[test,judges]'")
from chat_schema import extra_keys  # noqa: E402  (imports the OpenAI SDK)

PROFILES = list(normalizer.PROFILES)
#: The reasoning kept whole for its replay, besides the reasoning text keys.
REPLAY_KEYS = ("thinking_blocks", "reasoning_items", "thought_parts")
#: Formats whose records are chat messages: their keys are the caller's own.
CHAT_FORMATS = ("chat", "sharegpt", "finetune")


def _allowed(profile: str) -> tuple[str, ...]:
    """The keys the profile itself may put on a message (see the module docstring)."""
    declared = get_profile(profile)
    allowed: tuple[str, ...] = ()
    if declared.reasoning != "strip":
        allowed += (*REASONING_KEYS, *REPLAY_KEYS)
    if declared.trailing_assistant == "prefix":
        allowed += ("prefix",)
    return allowed


def _fills_tool_names(profile: str) -> bool:
    return any("tool.response_name" in RULES[rule].keys for rule in get_profile(profile).active_rules())


def _field_rules(profile: str) -> bool:
    return any("fields.unknown" in RULES[rule].keys for rule in get_profile(profile).active_rules())


JUDGED = list(PROFILES)


def _shape(path: str) -> str:
    """A key path with its indices as ``*``: ``tool_calls.0.status`` -> ``tool_calls.*.status``."""
    return re.sub(r"\.\d+(?=\.|$)", ".*", path)


def _own_keys(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The key paths the caller's chat messages hold outside the schema (as :func:`_shape`)."""
    return {_shape(path) for m in messages if isinstance(m, Mapping) for path in extra_keys(m)}


def _foreign(out: list[dict[str, Any]], profile: str, own: set[str]) -> list[str]:
    allowed = _allowed(profile)
    found = []
    for n, message in enumerate(out):
        extras = extra_keys(message, allowed)
        if message.get("role") == "tool" and _fills_tool_names(profile):
            extras = [k for k in extras if k != "name"]
        found += [f"{n}.{path}" for path in extras if _shape(path) not in own]
    return found


def _sample_histories() -> Iterator[tuple[str, list[dict[str, Any]], set[str]]]:
    if not SAMPLES.is_dir():
        return
    for path in sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".json", ".jsonl")):
        try:
            stream = read_conversations(path)
            conversations = [list(c.messages) for c in stream]
        except normalizer.NormalizerError:
            continue  # (a sample that is not a history: the readers' tests pin its error)
        mine = stream.format in CHAT_FORMATS  # (read as the caller wrote them: their keys are the caller's)
        for n, messages in enumerate(conversations):
            yield f"{path.relative_to(SAMPLES)}#{n}", messages, _own_keys(messages) if mine else set()


def _peer_histories() -> Iterator[tuple[str, list[Any], set[str]]]:
    if not PEER_CASES.is_file():
        return
    for case in json.loads(PEER_CASES.read_text(encoding="utf-8")):
        try:
            if case["expect"].get("via") == "responses":
                yield case["name"], list(read_messages(case["input"], format="responses")), set()
            else:
                yield case["name"], case["input"], _own_keys(case["input"])
        except normalizer.NormalizerError:
            continue


def _outputs(messages: list[Any], profile: str) -> list[dict[str, Any]] | None:
    try:
        return list(normalizer.repair(messages, profile=profile))  # type: ignore[arg-type]
    except normalizer.NormalizerError:
        return None  # refused (its error is pinned elsewhere): no chat output to judge


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=SKIP_REASON)
@pytest.mark.parametrize("profile", JUDGED)
def test_every_sample_in_chat_has_only_chat_keys(profile: str) -> None:
    found = {}
    for name, messages, own in _sample_histories():
        out = _outputs(messages, profile)
        if out is not None and (foreign := _foreign(out, profile, own)):
            found[name] = foreign[:5]
    assert found == {}


@pytest.mark.skipif(not PEER_CASES.is_file(), reason=SKIP_REASON)
@pytest.mark.parametrize("profile", JUDGED)
def test_every_peer_case_in_chat_has_only_chat_keys(profile: str) -> None:
    found = {}
    for name, messages, own in _peer_histories():
        out = _outputs(messages, profile)
        if out is not None and (foreign := _foreign(out, profile, own)):
            found[name] = foreign
    assert found == {}


@pytest.mark.parametrize("profile", PROFILES)
def test_hypothesis_histories_in_chat_have_only_chat_keys(profile: str) -> None:
    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(histories)
    def check(history: list[dict[str, Any]]) -> None:
        out = _outputs(history, profile)
        if out is not None:
            assert _foreign(out, profile, _own_keys(history)) == []

    check()


RESPONSES_ITEMS = [
    {"type": "message", "role": "user", "content": "hi"},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Let me check."}]},
    {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "a b"},
]
CHAT = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "Let me check.",
     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "a b"},
]


@pytest.mark.parametrize("profile", ["default", "openai"])
def test_responses_items_come_out_as_plain_chat(profile: str) -> None:
    # The reproducer: the item ids and statuses are not on the messages or calls.
    assert list(read_messages(RESPONSES_ITEMS, format="responses")) == CHAT
    assert list(normalizer.repair(read_messages(RESPONSES_ITEMS, format="responses"), profile=profile)) == CHAT
    out = io.BytesIO()
    write_jsonl(normalizer.repair(read_messages(RESPONSES_ITEMS, format="responses"), profile=profile), out)
    assert [json.loads(line) for line in out.getvalue().splitlines()] == CHAT


def test_round_trips_keep_the_source_fields() -> None:
    # A writer of the source format asks the stream for what its reader kept aside: the
    # items come back with their ids and statuses, through the repair, as before.
    out = io.BytesIO()
    write_responses(normalizer.repair(read_messages(RESPONSES_ITEMS, format="responses")), out, container="lines")
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]},
        {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}", "id": "fc_1", "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "a b"},
    ]


def test_a_list_of_the_messages_is_chat_and_written_without_them() -> None:
    # A list made of the stream holds chat messages only: nothing to restore from it (the
    # Responses writer then gives the assistant message the SDK's placeholder id).
    out = io.BytesIO()
    write_responses(list(normalizer.repair(read_messages(RESPONSES_ITEMS, format="responses"))), out, container="lines")
    items = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [item.get("id") for item in items] == [None, "__fake_id__", None, None]


def test_the_async_twins_keep_them_beside_the_chat_too() -> None:
    async def main() -> tuple[list[Any], bytes]:
        chat = [m async for m in normalizer.arepair(aread_messages(RESPONSES_ITEMS, "responses"))]
        out = io.BytesIO()
        await awrite_responses(normalizer.arepair(aread_messages(RESPONSES_ITEMS, "responses")), out, container="lines")
        return chat, out.getvalue()

    chat, written = anyio.run(main)
    assert chat == CHAT
    assert [json.loads(line).get("id") for line in written.splitlines()] == [None, "msg_1", "fc_1", None]
