"""What the adapters share (normalizer/integrations/_common.py)."""

from __future__ import annotations

from normalizer.integrations._common import repair_chat

HISTORY = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello", "source_fields": {"id": "msg_1"}, "x_origin": ["1"]},
    {"role": "user", "content": "bye"},
]


def test_a_history_sent_as_it_is_loses_the_fields_its_provider_rejects() -> None:
    result = repair_chat(HISTORY, "mistral", {})
    assert result.messages[1] == {"role": "assistant", "content": "hello"}
    assert [(r.kind, r.dropped) for r in result.report.records] == [
        ("drop_unknown_fields", {"source_fields": {"id": "msg_1"}, "x_origin": ["1"]})]


def test_a_history_mapped_back_keeps_the_keys_the_way_back_needs() -> None:
    # The framework writes the request: the adapter's keys and the reader's source_fields stay.
    for profile in ("mistral", "groq", "gemini"):
        result = repair_chat(HISTORY, profile, {}, mapped_back=True)
        assert result.messages == HISTORY and not result.report.changed, profile
    # A profile without fields.unknown is used as it is.
    assert repair_chat(HISTORY, "openai", {}, mapped_back=True).messages == HISTORY
