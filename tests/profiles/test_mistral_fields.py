"""The mistral profiles send only the fields mistral-common's request models know (MI-14) and
no ``developer`` role (MI-15): La Plateforme validates a request's JSON with those models
(``extra="forbid"``), so a replayed ``name`` on a user message is an HTTP 422
(``extra_forbidden``, ``loc: [body, messages, 0, user, name]``).

Pinned here: what is removed and how it is recorded, the developer message sent as a system
message, ``check`` flagging exactly what ``repair`` removes, the providers' own code accepting
the result, and speakers whose names are removed merging in the first pass (a fixed point).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalizer
from agent_strategies import agent_histories
from normalizer._content import CHAT_FIELDS, FIELD_TABLES, MISTRAL_FIELDS
from normalizer._note import Note
from normalizer.profiles._encode import Spelling
from normalizer.profiles._profiles import PROFILES
from normalizer.profiles import RULES
from provider_code import judges, require
from test_stage import named_histories

Msg = dict[str, Any]
MISTRAL = ["mistral", "mistral-v3"]
ID = "abcdefghi"
CALL = {"id": ID, "type": "function", "function": {"name": "f", "arguments": "{}"}}
SIGNATURE = {"google": {"thought_signature": "c2ln"}}


def _repair(history: list[Msg], profile: str) -> tuple[list[Msg], list[tuple[Any, ...]]]:
    stream = normalizer.repair(copy.deepcopy(history), profile=profile)
    out = list(stream)
    return out, [(r.kind, r.output, r.input, r.dropped) for r in stream.report.records]


# -- the table


def test_mistral_fields_are_mistral_commons_models() -> None:
    require("mistral")
    import mistral_common.protocol.instruct.messages as messages
    import mistral_common.protocol.instruct.tool_calls as tool_calls

    models = {"system": messages.SystemMessage, "user": messages.UserMessage,
              "assistant": messages.AssistantMessage, "tool": messages.ToolMessage}
    for event, model in models.items():
        assert model.model_config.get("extra") == "forbid"
        assert MISTRAL_FIELDS.messages[event] == frozenset(model.model_fields), event
    assert MISTRAL_FIELDS.calls == frozenset(tool_calls.ToolCall.model_fields)
    assert MISTRAL_FIELDS.functions == frozenset(tool_calls.FunctionCall.model_fields)


def test_each_field_rule_names_its_table() -> None:
    tables = {rule.id: rule.fields for rule in RULES.values() if "fields.unknown" in rule.keys}
    assert tables == {"GM-9": "chat", "MI-14": "mistral", "GQ-5": "chat"}
    assert all(rule.fields is None for rule in RULES.values() if "fields.unknown" not in rule.keys)
    assert set(FIELD_TABLES) == {"chat", "mistral"} and FIELD_TABLES["chat"] is CHAT_FIELDS
    for name in MISTRAL:
        assert Spelling(PROFILES[name])._fields is MISTRAL_FIELDS
    assert Spelling(PROFILES["groq"])._fields is CHAT_FIELDS


def test_a_profile_with_two_field_rules_knows_only_what_both_know() -> None:
    # mistral + Groq's rule: each rule says what its own table does not know; repair removes both.
    both = PROFILES["mistral"].derive("mistral-and-groq", add_rules=["GQ-5"])
    history = [{"role": "user", "content": "hi", "name": "al", "x_trace": 1}]
    found = [(v.rule, v.message) for v in normalizer.check(history, profile=both) if v.key == "fields.unknown"]
    assert found == [("MI-14", "name: Extra inputs are not permitted"),
                     ("MI-14", "x_trace: Extra inputs are not permitted"),
                     ("GQ-5", "'messages.0' : for 'role:user' the following must be satisfied[('messages.0' : "
                              "property 'x_trace' is unsupported)]")]
    out, records = _repair(history, both)
    assert out == [{"role": "user", "content": "hi"}]
    assert records == [("drop_unknown_fields", 0, [0], {"name": "al", "x_trace": 1})]


# -- what repair removes, and records


@pytest.mark.parametrize("profile", MISTRAL)
def test_a_name_is_removed_from_system_user_and_assistant_and_kept_on_a_tool_result(profile: str) -> None:
    history = [
        {"role": "system", "content": "be brief", "name": "ops"},
        {"role": "user", "content": "weather?", "name": "alice"},
        {"role": "assistant", "content": None, "name": "bot", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": ID, "name": "f", "content": "sunny"},
        {"role": "assistant", "content": "Sunny.", "name": "bot"},
        {"role": "user", "content": "thanks", "name": "alice"},
    ]
    out, records = _repair(history, profile)
    new = out[2]["tool_calls"][0]["id"]
    assert out == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": new}]},
        {"role": "tool", "tool_call_id": new, "name": "f", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
        {"role": "user", "content": "thanks"},
    ]
    assert [r for r in records if r[0] == "drop_unknown_fields"] == [
        ("drop_unknown_fields", 0, [0], {"name": "ops"}),
        ("drop_unknown_fields", 1, [1], {"name": "alice"}),
        ("drop_unknown_fields", 2, [2], {"name": "bot"}),
        ("drop_unknown_fields", 4, [4], {"name": "bot"}),
        ("drop_unknown_fields", 5, [5], {"name": "alice"}),
    ]
    stream = normalizer.repair(history, profile=profile)
    list(stream)
    [first] = [r for r in stream.report.records if r.kind == "drop_unknown_fields"][:1]
    assert first.detail == f"removed name: {profile} rejects fields it does not know"


@pytest.mark.parametrize("profile", MISTRAL)
def test_extra_content_is_removed_from_messages_and_calls(profile: str) -> None:
    history = [
        {"role": "user", "content": "go", "extra_content": {"k": 1}},
        {"role": "assistant", "content": None, "extra_content": SIGNATURE,
         "tool_calls": [{**CALL, "extra_content": SIGNATURE}]},
        {"role": "tool", "tool_call_id": ID, "content": "done", "extra_content": {"k": 2}},
    ]
    out, records = _repair(history, profile)
    new = out[1]["tool_calls"][0]["id"]
    assert out == [{"role": "user", "content": "go"},
                   {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": new}]},
                   {"role": "tool", "tool_call_id": new, "content": "done"}]
    assert [r for r in records if r[0] == "drop_unknown_fields"] == [
        ("drop_unknown_fields", 0, [0], {"extra_content": {"k": 1}}),
        ("drop_unknown_fields", 1, [1], {"extra_content": SIGNATURE, "tool_calls.0.extra_content": SIGNATURE}),
        ("drop_unknown_fields", 2, [2], {"extra_content": {"k": 2}}),
    ]


def test_groq_and_gemini_keep_what_mistral_removes() -> None:
    history = [{"role": "user", "content": "hi", "name": "alice", "extra_content": {"k": 1}}]
    for profile in ("groq", "gemini"):
        assert list(normalizer.repair(history, profile=profile)) == history
        assert [v for v in normalizer.check(history, profile=profile) if v.key == "fields.unknown"] == []


@pytest.mark.parametrize("profile", MISTRAL)
def test_a_developer_message_is_sent_as_a_system_message(profile: str) -> None:
    history = [{"role": "developer", "content": "Use tools.", "name": "codex"}, {"role": "user", "content": "hi"}]
    found = [(v.index, v.rule, v.message) for v in normalizer.check(history, profile=profile)]
    assert found == [
        (0, "MI-15", "Input tag 'developer' found using 'role' does not match any of the expected tags: "
                     "<Roles.system: 'system'>, <Roles.user: 'user'>, <Roles.assistant: 'assistant'>, "
                     "<Roles.tool: 'tool'>"),
        (0, "MI-14", "name: Extra inputs are not permitted"),
    ]
    out, records = _repair(history, profile)
    assert out == [{"role": "system", "content": "Use tools."}, {"role": "user", "content": "hi"}]
    assert records == [("developer_to_system", 0, [0], {"role": "developer"}),
                       ("drop_unknown_fields", 0, [0], {"name": "codex"})]
    # mid-history, it becomes user text as a system message does (system="leading")
    later = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
             {"role": "developer", "content": "Be terse.", "name": "codex"}]
    out, records = _repair(later, profile)
    assert out == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
                   {"role": "user", "content": "Be terse."}]
    assert normalizer.check(out, profile=profile) == []


# -- check flags exactly what repair removes

_EXTRA = {"name": "n", "extra_content": {"k": 1}, "refusal": "no", "audio": {"id": "a"}, "function_call": None,
          "prefix": True, "tool_call_id": ID, "source_fields": {"id": "m"}, "x_trace": 1, "finish_reason": "stop",
          "reasoning_content": "r", "codex_reasoning_items": [{"id": "rs"}]}
_CALL_EXTRA = {"extra_content": SIGNATURE, "status": "done", "name": "f", "index": 0}
_FUNCTION_EXTRA = {"strict": True, "description": "d"}


@st.composite
def _messages(draw: Any) -> tuple[str, Msg]:
    role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
    message: Msg = {"role": role, "content": "x"}
    if role == "tool":
        message["tool_call_id"] = ID
    for key in draw(st.lists(st.sampled_from(sorted(_EXTRA)), unique=True, max_size=4)):
        message[key] = _EXTRA[key]
    if role == "assistant" and draw(st.booleans()):
        calls = []
        for _ in range(draw(st.integers(1, 2))):
            call: Msg = {**CALL, **{k: _CALL_EXTRA[k] for k in draw(st.lists(st.sampled_from(sorted(_CALL_EXTRA)),
                                                                           unique=True, max_size=2))}}
            call["function"] = {**CALL["function"], **{k: _FUNCTION_EXTRA[k] for k in draw(
                st.lists(st.sampled_from(sorted(_FUNCTION_EXTRA)), unique=True, max_size=2))}}
            calls.append(call)
        message["tool_calls"] = calls
        message["content"] = None
    return ("system" if role == "developer" else role), message


@pytest.mark.parametrize("profile", MISTRAL)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_messages())
def test_check_flags_exactly_the_fields_repair_removes(profile: str, case: tuple[str, Msg]) -> None:
    """Per message: the fields check reports (MI-14) are the ones the encoder removes (its
    drop_unknown_fields record, and the opaque state its own step removes first)."""
    event, message = case
    flagged = [v.message.removesuffix(": Extra inputs are not permitted")
               for v in normalizer.Checker(profile).feed(copy.deepcopy(message)) if v.rule == "MI-14"]
    notes: list[Note] = []
    shaped = Spelling(PROFILES[profile]).shape(copy.deepcopy(message), event, [0], notes)
    removed = [path for n in notes if n.kind in ("drop_unknown_fields", "drop_opaque_state") for path in n.dropped]
    assert sorted(flagged) == sorted(removed)
    assert [v for v in normalizer.Checker(profile).feed(shaped) if v.rule in ("MI-14", "MI-15")] == []


@pytest.mark.parametrize("profile", MISTRAL)
def test_check_and_repair_agree_on_a_whole_history(profile: str) -> None:
    history = [
        {"role": "developer", "content": "rules", "name": "codex"},
        {"role": "user", "content": "go", "name": "alice", "extra_content": {"k": 1}},
        {"role": "assistant", "content": None, "name": "bot",
         "tool_calls": [{**CALL, "extra_content": SIGNATURE, "function": {**CALL["function"], "strict": True}}]},
        {"role": "tool", "tool_call_id": ID, "name": "f", "content": "done", "is_error": False},
        {"role": "user", "content": "thanks"},
    ]
    flagged = sorted((v.index, v.message.split(":")[0]) for v in normalizer.check(history, profile=profile)
                     if v.rule == "MI-14")
    assert flagged == [(0, "name"), (1, "extra_content"), (1, "name"), (2, "name"), (2, "tool_calls.0.extra_content"),
                       (2, "tool_calls.0.function.strict"), (3, "is_error")]
    assert [v.index for v in normalizer.check(history, profile=profile) if v.rule == "MI-15"] == [0]
    out, records = _repair(history, profile)
    removed = sorted((r[2][0], path) for r in records if r[0] == "drop_unknown_fields" for path in r[3])
    assert removed == flagged
    assert [r[2] for r in records if r[0] == "developer_to_system"] == [[0]]
    assert normalizer.check(out, profile=profile) == []


# -- the providers' own code


_NAMED = [
    {"role": "developer", "content": "Use tools.", "name": "codex"},
    {"role": "user", "content": "weather?", "name": "alice", "extra_content": {"k": 1}},
    {"role": "assistant", "content": "Checking.", "name": "bot"},
    {"role": "assistant", "content": None, "name": "bot", "tool_calls": [{**CALL, "extra_content": SIGNATURE}]},
    {"role": "tool", "tool_call_id": ID, "name": "f", "content": "sunny"},
    {"role": "user", "content": "and tomorrow?", "name": "bob"},
]


@pytest.mark.parametrize(("profile", "judge_name"), [
    *(("mistral", f"mistral-validator-{v}") for v in ("v7", "v11", "v13", "v3")),
    ("mistral", "mistral-encode-v7"), ("mistral-v3", "mistral-validator-v3"), ("mistral-v3", "mistral-encode-v3"),
])
def test_the_providers_own_code_accepts_what_it_refused(profile: str, judge_name: str) -> None:
    require("mistral")
    judge = judges()[judge_name][1]
    if judge_name.startswith("mistral-validator"):  # (the encoder reads it through from_openai: no fields)
        assert judge(_NAMED) is not None
    out = list(normalizer.repair(copy.deepcopy(_NAMED), profile=profile))
    assert judge(out) is None, out


def test_la_plateforme_refuses_each_field_and_the_developer_role() -> None:
    # Its request model, as it reads the JSON (the judge's first step), says what and where.
    require("mistral")
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from pydantic import ValidationError

    def errors(messages: list[Msg]) -> list[tuple[Any, ...]]:
        try:
            ChatCompletionRequest.model_validate({"model": "m", "messages": copy.deepcopy(messages)})
        except ValidationError as exc:
            return [(e["type"], *e["loc"]) for e in exc.errors()]
        return []

    assert errors(_NAMED) == [
        ("union_tag_invalid", "messages", 0),
        ("extra_forbidden", "messages", 1, "user", "name"),
        ("extra_forbidden", "messages", 1, "user", "extra_content"),
        ("extra_forbidden", "messages", 2, "assistant", "name"),
        ("extra_forbidden", "messages", 3, "assistant", "tool_calls", 0, "extra_content"),
        ("extra_forbidden", "messages", 3, "assistant", "name"),
        ("extra_forbidden", "messages", 5, "user", "name"),
    ]
    try:
        ChatCompletionRequest.model_validate({"model": "m", "messages": _NAMED[:1]})
    except ValidationError as exc:
        assert exc.errors()[0]["msg"] == RULES["MI-15"].text
    for profile in MISTRAL:
        assert errors(list(normalizer.repair(copy.deepcopy(_NAMED), profile=profile))) == []


@pytest.mark.parametrize("profile", MISTRAL)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(history=st.one_of(named_histories, agent_histories.flatmap(
    lambda h: st.tuples(*(st.sampled_from([None, "alice", "bob"]) for _ in h)).map(
        lambda names: [{**m, "name": n} if n and m.get("role") != "tool" else m for m, n in zip(h, names)]))))
def test_named_histories_are_accepted_after_repair(profile: str, history: list[Msg]) -> None:
    require("mistral")
    out = list(normalizer.repair(copy.deepcopy(history), profile=profile))
    if not out:
        return
    versions = ("v7", "v11", "v13", "v3") if profile == "mistral" else ("v3",)
    for version in versions:
        assert judges()[f"mistral-validator-{version}"][1](out) is None, (version, out)
    assert normalizer.check(out, profile=profile) == []
    assert list(normalizer.repair(out, profile=profile)) == out


# -- speakers whose names are removed: one pass is a fixed point


@pytest.mark.parametrize("profile", MISTRAL)
def test_two_speakers_side_by_side_merge_once_their_names_are_removed(profile: str) -> None:
    # Kept apart by their names, then the names go: a second pass (which sees none) would
    # merge them, so the first does (the core tells speakers apart as the output names them).
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "I think A.", "name": "planner"},
        {"role": "assistant", "content": "I think B.", "name": "critic"},
        {"role": "user", "content": "u1", "name": "alice"},
        {"role": "user", "content": "u2", "name": "bob"},
    ]
    out, records = _repair(history, profile)
    assert out == [{"role": "user", "content": "q"},
                   {"role": "assistant", "content": "I think A.\nI think B."},
                   {"role": "user", "content": "u1\nu2"}]
    assert records == [
        ("merge_assistant", 1, [1, 2], None),
        ("merge_conflict", 1, [1, 2], {"name": "planner"}),
        ("drop_unknown_fields", 1, [1, 2], {"name": "critic"}),
        ("merge_user", 2, [3, 4], None),
        ("merge_conflict", 2, [3, 4], {"name": "alice"}),
        ("drop_unknown_fields", 2, [3, 4], {"name": "bob"}),
    ]
    again, second = _repair(out, profile)
    assert again == out and second == []
    assert normalizer.check(out, profile=profile) == []


def test_a_speakers_text_merges_but_the_calls_stay_apart() -> None:
    # mistral keeps text and calls in two messages (MI-5): the text half of the second
    # speaker's turn merges into the first speaker's text, the calls never merge.
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "A says.", "name": "planner"},
        {"role": "assistant", "content": "B looks.", "name": "critic", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": ID, "content": "r"},
    ]
    out, _ = _repair(history, "mistral")
    assert [(m["role"], m.get("content"), bool(m.get("tool_calls"))) for m in out] == [
        ("user", "q", False), ("assistant", "A says.\nB looks.", False), ("assistant", None, True),
        ("tool", "r", False)]
    assert _repair(out, "mistral")[0] == out


@pytest.mark.parametrize("profile", MISTRAL)
def test_two_speakers_calls_are_one_turn_once_their_names_are_removed(profile: str) -> None:
    # Two named speakers' calls, then both results: the provider sees one turn of two calls
    # answered in order. Told apart by names it never sees, the first call would end its turn
    # unanswered (a stub) and its real result would be dropped as an orphan.
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "name": "A", "tool_calls": [CALL]},
        {"role": "assistant", "content": None, "name": "B",
         "tool_calls": [{"id": "bcdefghij", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": ID, "content": "r1"},
        {"role": "tool", "tool_call_id": "bcdefghij", "content": "r2"},
    ]
    out, records = _repair(history, profile)
    [turn] = [m for m in out if m.get("tool_calls")]
    ids = [c["id"] for c in turn["tool_calls"]]
    assert [c["function"]["name"] for c in turn["tool_calls"]] == ["f", "g"]
    assert out[-2:] == [{"role": "tool", "tool_call_id": ids[0], "content": "r1"},
                        {"role": "tool", "tool_call_id": ids[1], "content": "r2"}]
    kinds = [r[0] for r in records]
    assert "stub_missing_result" not in kinds and "drop_orphan_result" not in kinds
    assert ("merge_conflict", 1, [1, 2], {"name": "A"}) in records
    assert ("drop_unknown_fields", 1, [1, 2], {"name": "B"}) in records
    assert _repair(out, profile)[0] == out


@pytest.mark.parametrize("profile", ["openai", "strict"])
def test_names_sanitized_alike_are_one_speaker(profile: str) -> None:
    # "a b" and "a_b" are both sent as "a_b": one speaker to the provider, and to a second pass.
    history = [{"role": "user", "content": "x", "name": "a b"}, {"role": "user", "content": "y", "name": "a_b"},
               {"role": "assistant", "content": "ok", "name": "p q"}, {"role": "assistant", "content": "ok2", "name": "p_q"}]
    out, records = _repair(history, profile)
    assert [(m["role"], m["content"], m["name"]) for m in out[:2]] == [("user", "x\ny", "a_b"),
                                                                      ("assistant", "ok\nok2", "p_q")]
    assert ("merge_conflict", 0, [0, 1], {"name": "a b"}) in records
    assert _repair(out, profile)[0] == out
