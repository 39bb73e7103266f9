"""The OpenAI Agents SDK's peer cases read as chat equal the SDK's own conversion.

Each case of ``../shared/peers/cases.json`` taken from the Agents SDK's tests holds Responses
items; the SDK turns them into chat messages with ``Converter.items_to_messages``
(``agents.models.chatcmpl_converter``, openai-agents 0.24). The Responses reader gives the
same chat messages -- the items' own fields (``id``, ``status``, ``phase``...) are not on them
(issue 39 item 1: they ride beside the messages, for a writer of Responses items) -- except
where this project decides otherwise, each listed in :data:`DIFFERENCES` with why, and
pinned to differ (a difference that goes away must leave the list).
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pytest

import normalizer
from normalizer.formats import read_messages

from realdata import PEER_CASES, SKIP_REASON

converter = pytest.importorskip("agents.models.chatcmpl_converter").Converter

CASES: list[dict[str, Any]] = (
    [c for c in json.loads(PEER_CASES.read_text(encoding="utf-8")) if c["source"].startswith("openai/openai-agents-python:")]
    if PEER_CASES.is_file() else []
)

#: Cases where our chat differs from the SDK's, and why.
DIFFERENCES: dict[str, str] = {
    "oa_non_text_function_output_default": "the SDK puts a placeholder for a tool output with no text; the reader keeps "
    "the image (the openai profile sends the tool message's text only, recorded)",
    "oa_non_text_function_output_openai_profile": "as oa_non_text_function_output_default (the profile applies in the repair)",
    "oa_preserve_non_text_function_output": "as oa_non_text_function_output_default",
    "oa_empty_function_output": "the SDK puts a placeholder for an empty tool output; the reader keeps it empty "
    "(the profiles decide what an empty result becomes)",
    "oa_mixed_function_output_keeps_text": "the SDK leaves the image out of a tool output with text; the reader keeps it",
    "oa_item_reference": "the SDK raises on an item_reference; the reader leaves it out, recorded (drop_item_reference)",
    "oa_unknown_item_type": "the SDK raises on an unknown item; the reader leaves it out, recorded (drop_unknown_item)",
    "oa_unknown_object_no_type": "both refuse it: the SDK with its UserError, the reader with its InvalidMessage",
    "oa_split_turn_without_item_id": "the SDK refuses a function_call after a message with no id; the reader joins them",
    "oa_deepseek_reasoning_on_tool_call": "the SDK replays reasoning only for a model that asks for it; the reader keeps "
    "it (reasoning_content and the item whole in reasoning_items), the profiles decide",
    "oa_reasoning_from_other_provider": "as oa_deepseek_reasoning_on_tool_call",
    "oa_reasoning_without_provider_data": "as oa_deepseek_reasoning_on_tool_call",
    "oa_plaintext_reasoning_round_trip": "as oa_deepseek_reasoning_on_tool_call",
    "oa_plaintext_reasoning_with_tool_call": "as oa_deepseek_reasoning_on_tool_call",
}


def _theirs(items: list[Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (its placeholder warning)
            messages = converter.items_to_messages(copy.deepcopy(items))
    except Exception as exc:  # the SDK's own refusal (UserError), named
        return f"raises {type(exc).__name__}"
    return json.loads(json.dumps(messages))  # (its iterables as lists)


def _ours(items: list[Any]) -> Any:
    try:
        return list(read_messages(copy.deepcopy(items), format="responses"))
    except normalizer.NormalizerError as exc:
        return f"raises {type(exc).__name__}"


@pytest.mark.skipif(not CASES, reason=SKIP_REASON)
def test_the_cases_are_the_sdks() -> None:
    # Every difference names a case there is (a renamed case must not hide a mismatch).
    assert set(DIFFERENCES) <= {case["name"] for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_responses_reader_reads_items_as_the_agents_sdk_does(case: dict[str, Any]) -> None:
    ours, theirs = _ours(case["input"]), _theirs(case["input"])
    if case["name"] in DIFFERENCES:
        assert ours != theirs, f"{case['name']} now reads as the SDK does: take it off DIFFERENCES"
    else:
        assert ours == theirs
