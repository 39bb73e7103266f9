"""Arbitrary input: every run ends with a valid output or the project's own error."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, find, given, settings
from hypothesis import strategies as st

import normalizer
from normalizer import InputError, InvalidMessage, LimitExceeded, Normalizer
from normalizer._messages import validate_message

from helpers import A, S, T, U, assert_nothing_lost, assert_pairing_rules

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
roles = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "", 5, None])
keys = st.sampled_from(["content", "tool_calls", "tool_call_id", "name", "reasoning_content", "function", "id"])
# Messages that look almost right: a role and fields of arbitrary types everywhere.
near_messages = st.builds(
    lambda role, fields: {"role": role, **fields},
    roles,
    st.dictionaries(keys, st.one_of(json_values, st.lists(st.dictionaries(
        st.sampled_from(["id", "call_id", "type", "function"]),
        st.one_of(json_values, st.dictionaries(st.sampled_from(["name", "arguments"]), json_values, max_size=2)),
        max_size=4,
    ), max_size=3)), max_size=5),
)
ids = st.sampled_from(["c1", "c2", "c3"])
# Messages that are right (with the defects the core repairs: split turns, calls without
# results, results without calls): among the others, they make whole histories valid often
# enough that the properties test repairs, not only refusals (one in a thousand were, before).
valid_messages = st.one_of(
    st.builds(U, st.text(max_size=10)),
    st.builds(S, st.text(max_size=10)),
    st.builds(A, st.one_of(st.none(), st.text(max_size=10))),
    st.builds(lambda c, calls: A(c, calls), st.one_of(st.none(), st.just("")), st.lists(ids, min_size=1, max_size=3)),
    st.builds(T, ids, st.text(max_size=10)),
)
anything = st.lists(st.one_of(json_values, near_messages, near_messages, valid_messages, valid_messages), max_size=20)

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _first_invalid(history) -> int | None:
    """The index of the first message the validator refuses, else None."""
    for index, message in enumerate(history):
        try:
            validate_message(message, index)
        except InvalidMessage:
            return index
    return None


@SETTINGS
@given(anything)
def test_arbitrary_values_give_valid_output_or_an_error_at_the_first_invalid_message(history):
    bad = _first_invalid(history)
    event("valid" if bad is None else "invalid")  # `pytest --hypothesis-show-statistics`: both occur
    try:
        stream = normalizer.repair(history)
        out = list(stream)
    except InvalidMessage as exc:
        assert exc.index == bad is not None, f"error at {exc.index}, first invalid message {bad}: {exc}"
        assert str(exc).startswith(f"message {bad}")
        return
    assert bad is None, f"message {bad} is invalid but was repaired"
    assert_pairing_rules(out)
    json.dumps(out)  # JSON-ready
    stream.report.model_dump_json()


@SETTINGS
@given(anything)
def test_arbitrary_values_skipped_when_asked_lose_nothing_valid(history):
    stream = normalizer.repair(history, on_invalid="skip")
    out = list(stream)  # never raises: every invalid message is skipped and recorded
    report = stream.report
    assert_pairing_rules(out)
    skipped = [r.input[0] for r in report.records if r.kind == "skip_invalid"]
    assert skipped == [i for i, m in enumerate(history) if _first_invalid([m]) is not None]
    report.model_dump_json()
    if not skipped:
        assert_nothing_lost(history, out, report)


@SETTINGS
@given(anything)
def test_validation_off_only_raises_documented_errors(history):
    try:
        out = list(normalizer.repair(history, validate=False))
    except InputError as exc:
        assert exc.index is not None and 0 <= exc.index < len(history)
        assert str(exc).startswith(f"message {exc.index}")
    else:
        json.dumps(out, default=repr)


def test_the_properties_above_see_both_valid_and_invalid_histories():
    # Guards the generators: were every example invalid, the properties would test nothing.
    valid = find(anything, lambda h: len(h) >= 3 and _first_invalid(h) is None)
    invalid = find(anything, lambda h: _first_invalid(h) is not None)
    assert _first_invalid(valid) is None and _first_invalid(invalid) is not None


def test_deeply_nested_content_is_a_clear_error_or_passes():
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    history = [U("q"), {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": deep}}}]}]
    with pytest.raises(InputError, match="message 1"):
        list(normalizer.repair(history))


def test_huge_string_passes_through():
    big = "y" * 20_000_000
    out = list(normalizer.repair([U(big), A("ok")]))
    assert out[0]["content"] is big


def test_a_million_assistant_fragments_hit_the_limit_not_the_memory():
    n = Normalizer()
    with pytest.raises(LimitExceeded) as info:
        for _ in range(1_000_000):
            n.feed(A("fragment"))
    assert info.value.limit == "max_turn_fragments" and info.value.index == 10_000


def test_many_held_results_hit_the_limit():
    calls = [f"c{i}" for i in range(20)]
    n = Normalizer(max_held_messages=10)
    n.feed(A(None, calls))
    with pytest.raises(LimitExceeded, match="max_held_messages"):
        for c in calls:
            n.feed(T(c))


def test_untrusted_files_are_data_never_code(tmp_path, monkeypatch):
    # A profile "file" that is Python is refused, not imported; a session file whose text
    # looks like code is only ever text.
    marker = tmp_path / "ran"
    evil = tmp_path / "evil_profile.py"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(normalizer.UsageError, match="must end in .toml or .json"):
        Normalizer(profile=str(evil))
    with pytest.raises(normalizer.UsageError, match="unknown profile"):
        Normalizer(profile="evil_profile")
    session = tmp_path / "session.jsonl"
    session.write_text(json.dumps({"role": "user", "content": f"__import__('os').system('touch {marker}')"}) + "\n")
    out = list(normalizer.repair(normalizer.read_messages(session)))
    assert out[0]["content"].startswith("__import__")
    assert not marker.exists()
