"""Profiles judged by the providers' own code (issue 14): repair, then the real validator.

For every required profile x judge pair (``provider_code.py``: mistral-common, transformers'
template renderer over the real templates, LiteLLM's converters + botocore), over generated
agent histories (hypothesis, ``agent_strategies.py``) and over the real histories (peers'
cases and the session samples, ``judged_histories.py``): every repaired history is accepted.
Where a pair cannot reach that (mistral v3 with text beside calls; a text-only tokenizer with
an image; ``default`` on a template), the recorded behaviour is pinned instead.

Needs the judges (``pip install -e '.[test,judges]'``): each judge family skips with a reason
when its package is absent; the template and real-data tests skip without ``../shared/``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

import normalizer
from agent_strategies import agent_histories
from judged_histories import REQUIRED, all_histories, selected
from provider_code import have_templates, judges, require
from realdata import SKIP_REASON

Messages = list[dict[str, Any]]

def _judge(name: str) -> Any:
    family, judge = judges()[name]
    require(family)
    if family == "template" and not have_templates():
        pytest.skip(SKIP_REASON)
    return judge


def _repair(history: Messages, profile: str) -> Messages:
    return list(normalizer.repair(copy.deepcopy(history), profile=profile))


@pytest.mark.parametrize(("profile", "judge_name", "which"), REQUIRED, ids=lambda v: str(v))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(history=agent_histories)
# found in CI: an opaque turn's empty call list (Llama 3.1: "only supports single tool-calls")
@example(history=[{"role": "assistant", "content": None, "tool_calls": [], "finish_reason": "incomplete"}])
# found by hypothesis: two call-only messages are one turn of two calls (has_parallel_calls)
@example(history=[{"role": "developer", "content": "be brief"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}])
def test_generated_histories_are_accepted_after_repair(profile: str, judge_name: str, which: str,
                                                       history: Messages) -> None:
    judge = _judge(judge_name)
    if not selected(history, which):
        return
    out = _repair(history, profile)
    if not out:
        return  # nothing to send (only an orphan result, or no message): no request is made
    assert judge(out) is None, out


@pytest.mark.parametrize("profile", list(normalizer.PROFILES))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(history=agent_histories)
def test_agent_histories_repair_satisfies_check_and_is_idempotent(profile: str, history: Messages) -> None:
    original = copy.deepcopy(history)
    once = _repair(history, profile)
    assert history == original
    assert normalizer.check(once, profile=profile) == []
    assert _repair(once, profile) == once


_REAL: list[tuple[str, Messages]] | None = None


def _real() -> list[tuple[str, Messages]]:
    global _REAL
    if _REAL is None:
        _REAL = all_histories()
    return _REAL


@pytest.mark.parametrize(("profile", "judge_name", "which"), REQUIRED, ids=lambda v: str(v))
def test_real_histories_are_accepted_after_repair(profile: str, judge_name: str, which: str) -> None:
    judge = _judge(judge_name)
    corpus = [(n, h) for n, h in _real() if selected(h, which) and not n.startswith("generated:")]
    if not corpus:
        pytest.skip(SKIP_REASON)
    rejected = [(name, judge(out)) for name, h in corpus if (out := _repair(h, profile)) and judge(out) is not None]
    assert rejected == []


# -- where no lossless form exists: the recorded choice, pinned

CALL = {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": "{}"}}
TEXT_THEN_CALLS = [{"role": "user", "content": "hi"},
                   {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL]},
                   {"role": "tool", "tool_call_id": "abcdefghi", "content": "r"}]


def test_mistral_v3_cannot_send_text_beside_calls_so_the_text_is_dropped_and_recorded() -> None:
    encode_v3 = _judge("mistral-encode-v3")
    # mistral (v7+) splits the text from the calls (MI-5); v3's request normalizer merges the
    # two messages back and rejects them.
    split = _repair(TEXT_THEN_CALLS, "mistral")
    assert [m["content"] for m in split] == ["hi", "Let me look.", None, "r"]
    # (the message, then the merged message's repr, which is mistral-common's and not pinned here)
    assert encode_v3(split).startswith("Cannot have tool calls and content defined in the same assistant message "
                                       "role='assistant' content='Let me look.' tool_calls=[ToolCall(id='P5gRZ3YvF'")
    # mistral-v3: the text is dropped from the request, kept whole in the report.
    stream = normalizer.repair(copy.deepcopy(TEXT_THEN_CALLS), profile="mistral-v3")
    out = list(stream)
    assert out == [{"role": "user", "content": "hi"},
                   {"role": "assistant", "content": None, "tool_calls": [{**CALL, "id": "P5gRZ3YvF"}]},
                   {"role": "tool", "tool_call_id": "P5gRZ3YvF", "content": "r"}]
    assert encode_v3(out) is None
    assert [(r.kind, r.dropped) for r in stream.report.records if r.kind == "drop_text_before_calls"] == [
        ("drop_text_before_calls", {"role": "assistant", "content": "Let me look."})]
    assert normalizer.check(out, profile="mistral-v3") == []


def test_a_text_only_mistral_tokenizer_cannot_encode_an_image() -> None:
    encode_v7 = _judge("mistral-encode-v7")
    history = [{"role": "user", "content": [{"type": "text", "text": "look"},
                                            {"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]
    out = _repair(history, "mistral")
    assert out == history  # the request validator accepts it: the model may be a vision model
    assert _judge("mistral-validator-v7")(out) is None
    assert encode_v7(out) == "Make sure to define a image encoder at init"


def test_default_keeps_list_content_which_a_template_cannot_concatenate() -> None:
    # default is for OpenAI-compatible APIs (they accept content parts); a template served
    # as it is needs jinja-strict or the model family's profile.
    qwen25 = _judge("template-qwen2.5")
    history = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert _repair(history, "default") == history
    assert qwen25(history) == 'can only concatenate str (not "list") to str'
    assert _repair(history, "qwen3") == [{"role": "user", "content": "a\nb"}]
    assert qwen25(_repair(history, "qwen3")) is None


def test_llama3_sends_parallel_calls_as_rounds_in_call_order() -> None:
    llama = _judge("template-llama3.1")
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": "f", "arguments": f'{{"k": {k}}}'}}
             for k in range(3)]
    history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "Three at once.", "tool_calls": calls},
               {"role": "tool", "tool_call_id": "call_2", "content": "r2"},
               {"role": "tool", "tool_call_id": "call_0", "content": "r0"},
               {"role": "tool", "tool_call_id": "call_1", "content": "r1"}]
    assert llama(history) == "This model only supports single tool-calls at once!"
    stream = normalizer.repair(copy.deepcopy(history), profile="llama3")
    out = list(stream)
    # (the text first, as its own message: the template shows a message with a call as the call alone)
    assert out == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "Three at once."},
        {"role": "assistant", "content": "", "tool_calls": [calls[0]]},
        {"role": "tool", "tool_call_id": "call_0", "content": "r0"},
        {"role": "assistant", "content": "", "tool_calls": [calls[1]]},
        {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
        {"role": "assistant", "content": "", "tool_calls": [calls[2]]},
        {"role": "tool", "tool_call_id": "call_2", "content": "r2"},
    ]
    assert llama(out) is None
    assert [(r.kind, r.output) for r in stream.report.records] == [("split_text_and_calls", 2),
                                                                   ("split_parallel_calls", 2),
                                                                   ("reorder_results", None)]
    assert _repair(out, "llama3") == out


def test_llama3_keeps_only_the_last_rounds_trailing_call_open() -> None:
    # trailing_calls="keep" (the tool may still be running them): as rounds, every call but
    # the last has a round after it, so it is answered (a stub, recorded); left open, a second
    # repair found it unanswered mid-history and stubbed it then (not a fixed point).
    llama = _judge("template-llama3.1")
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for k in "abc"]
    history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": calls},
               {"role": "tool", "tool_call_id": "call_b", "content": "rb"}]
    stream = normalizer.repair(copy.deepcopy(history), profile="llama3", trailing_calls="keep")
    out = list(stream)
    stub = "[no result: this tool call was not answered in the stored history]"
    assert out == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [calls[0]]},
        {"role": "tool", "tool_call_id": "call_a", "content": stub},
        {"role": "assistant", "content": "", "tool_calls": [calls[1]]},
        {"role": "tool", "tool_call_id": "call_b", "content": "rb"},
        {"role": "assistant", "content": "", "tool_calls": [calls[2]]},
    ]
    assert [(r.kind, r.input, r.output) for r in stream.report.records] == [
        ("encode_tool_only_content", [1], 1), ("split_parallel_calls", [1], 1), ("stub_missing_result", [1], 2)]
    again = normalizer.repair(copy.deepcopy(out), profile="llama3", trailing_calls="keep")
    assert list(again) == out and again.report.records == []
    assert llama(out) is None


def test_anthropic_leaves_valid_ids_alone_and_numbers_a_reused_one() -> None:
    call = {"id": "toolu_01C4Xv9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    turn = [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "toolu_01C4Xv9", "content": "r"}]
    history = [{"role": "user", "content": "go"}, *turn, {"role": "user", "content": "again"}, *turn,
               {"role": "user", "content": "thanks"}]
    out = _repair(history, "anthropic")
    assert [c["id"] for m in out for c in m.get("tool_calls") or ()] == ["toolu_01C4Xv9", "toolu_01C4Xv9_1"]
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == ["toolu_01C4Xv9", "toolu_01C4Xv9_1"]
    assert _repair(out, "anthropic") == out
    assert _judge("litellm-anthropic")(out) is None


def test_anthropic_closes_truncated_arguments_and_keeps_the_original() -> None:
    history = [{"role": "user", "content": "write it"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "toolu_1", "type": "function",
                    "function": {"name": "write", "arguments": '{"path": "a.py", "text": "def f('}}]},
               {"role": "tool", "tool_call_id": "toolu_1", "content": "error: cut off"}]
    anthropic = _judge("litellm-anthropic")
    assert anthropic(history) is not None and anthropic(history).startswith(
        "Failed to parse tool call arguments for tool 'write' (Anthropic tool invoke).")
    stream = normalizer.repair(copy.deepcopy(history), profile="anthropic")
    out = list(stream)
    assert out[1]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.py", "text": "def f("}'
    assert [(r.kind, r.dropped) for r in stream.report.records] == [
        ("repair_arguments", {"id": "toolu_1", "arguments": '{"path": "a.py", "text": "def f('})]
    assert anthropic(out) is None


def test_gemini_sends_two_alike_calls_as_rounds_so_litellm_keeps_both() -> None:
    # issue 38 item 3: "" arguments become "{}", the two calls to f are then alike, and
    # LiteLLM's Gemini converter sends one call part and two response parts (Gemini refuses).
    gemini = _judge("litellm-gemini")
    calls = [{"id": f"call_{k}", "type": "function", "function": {"name": "f", "arguments": ""}} for k in "ab"]
    history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": calls},
               {"role": "tool", "tool_call_id": "call_a", "content": "ra"},
               {"role": "tool", "tool_call_id": "call_b", "content": "rb"}]
    assert gemini(_repair(history, "default")) == "1 function call parts, 2 function response parts"
    stream = normalizer.repair(copy.deepcopy(history), profile="gemini")
    out = list(stream)
    empty = [{**c, "function": {"name": "f", "arguments": "{}"}} for c in calls]
    assert out == [history[0], {"role": "assistant", "content": None, "tool_calls": [empty[0]]},
                   {"role": "tool", "tool_call_id": "call_a", "content": "ra", "name": "f"},
                   {"role": "assistant", "content": None, "tool_calls": [empty[1]]},
                   {"role": "tool", "tool_call_id": "call_b", "content": "rb", "name": "f"}]
    assert [r.kind for r in stream.report.records] == ["default_arguments", "default_arguments", "split_parallel_calls",
                                                      "fill_tool_name", "fill_tool_name"]
    assert gemini(out) is None and normalizer.check(out, profile="gemini") == []
