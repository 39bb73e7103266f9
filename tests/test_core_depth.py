"""The readers' ``max_depth`` (one default, ``_defaults.DEFAULT_MAX_DEPTH``) applied to
histories given in memory, where the core would recurse into a message: before pydantic
validates one that is not plain, before an invalid one is described, and when a merge
compares two deep values. Past it: a LimitExceeded naming the message's index and the limit,
never a RecursionError. Issue 35, third round: a history nested 100,000 deep raised
RecursionError from ``normalizer.repair`` (an invalid field's description, a merge's record
at close, pydantic's repr of a deep value).

What the core only passes along is not walked (that would cost every message a walk: +21%
instructions a message): with ``validate=False`` a deep content goes out as it came, and a
writer refuses it (orjson writes at most 255 levels)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import normalizer
from normalizer import LimitExceeded, Normalizer
from normalizer._defaults import DEFAULT_MAX_DEPTH
from normalizer.formats import _records


def nested_list(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def nested_dict(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def call(arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]}


N = 100_000
# (messages, the index of the deep one, refused with validate=False too)
HISTORIES = {
    "content list": ([{"role": "user", "content": nested_list(N)}], 0, False),
    "content object": ([{"role": "user", "content": nested_dict(N)}], 0, False),
    "arguments object": ([{"role": "user", "content": "q"}, call({"a": nested_dict(N)})], 1, False),
    "tool call id": ([{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": nested_list(N),
                                                          "content": "r"}], 1, False),
    "role": ([{"role": nested_dict(N), "content": "q"}], 0, True),
    "extra key, merged": ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "x": nested_dict(N)},
                           {"role": "assistant", "content": "b", "x": nested_dict(N)}], 2, True),
    "result content": ([{"role": "user", "content": "q"}, call("{}"),
                        {"role": "tool", "tool_call_id": "c", "content": [nested_dict(N)]}], 2, False),
}


def test_one_limit_for_the_readers_and_the_core():
    assert _records.DEFAULT_MAX_DEPTH == DEFAULT_MAX_DEPTH == Normalizer().options.max_depth == 128


@pytest.mark.parametrize("validate", [True, False], ids=["validate", "no-validate"])
@pytest.mark.parametrize("name", HISTORIES)
def test_a_history_nested_100_000_deep_is_a_limit_not_a_recursion_error(name: str, validate: bool):
    messages, index, unvalidated = HISTORIES[name]
    if not validate and not unvalidated:
        # Nothing recursed into it: passed along (or an arguments object: orjson's own refusal).
        try:
            list(normalizer.repair(messages, validate=False))
        except normalizer.InvalidMessage as exc:
            assert exc.index == index
        return
    with pytest.raises(LimitExceeded) as caught:
        list(normalizer.repair(messages, validate=validate))
    error = caught.value
    assert (error.index, error.limit, error.value) == (index, "max_depth", DEFAULT_MAX_DEPTH)
    assert str(error).startswith(f"message {index}: message nests deeper than {DEFAULT_MAX_DEPTH} levels of objects "
                                 "and lists (max_depth). ")


def test_max_depth_is_counted_as_the_readers_count_it():
    # The message object is level 1, as a JSONL line's outermost bracket is.
    at_limit = {"role": "user", "content": nested_list(DEFAULT_MAX_DEPTH - 1)}
    assert list(normalizer.repair([at_limit])) == [at_limit]
    past = {"role": "user", "content": nested_list(DEFAULT_MAX_DEPTH)}
    with pytest.raises(LimitExceeded):
        list(normalizer.repair([past]))
    assert list(normalizer.repair([past], max_depth=DEFAULT_MAX_DEPTH + 1)) == [past]
    with pytest.raises(LimitExceeded, match=r"^message 0: message nests deeper than 3 levels"):
        list(normalizer.repair([{"role": "user", "content": [{"type": "text", "text": "q", "x": [1]}]}], max_depth=3))


def test_the_limit_does_not_depend_on_the_interpreter_s_recursion_limit():
    deep = [{"role": "user", "content": [nested_dict(500)]}]  # well under 1,000 frames
    old = sys.getrecursionlimit()
    for limit in (old, 100_000):
        sys.setrecursionlimit(limit)
        try:
            with pytest.raises(LimitExceeded):
                list(normalizer.repair(deep))
        finally:
            sys.setrecursionlimit(old)


def test_on_invalid_skip_leaves_the_deep_message_out_and_records_it():
    messages = [{"role": "user", "content": nested_list(N)}, {"role": "user", "content": "q"}]
    out = normalizer.repair(messages, on_invalid="skip")
    assert list(out) == [{"role": "user", "content": "q"}]
    [record] = out.report.records
    assert record.kind == "skip_invalid" and "max_depth" in record.detail


def test_a_pydantic_message_is_checked_as_its_dump():
    pydantic = pytest.importorskip("pydantic")

    class Message(pydantic.BaseModel):
        role: str
        content: Any

    with pytest.raises(LimitExceeded) as caught:
        list(normalizer.repair([Message(role="user", content=nested_list(300))]))
    assert caught.value.index == 0


@pytest.mark.parametrize("validate", [True, False])
@pytest.mark.parametrize("value", [None, 1, "x", []])
def test_a_message_that_is_no_object_is_invalid_not_too_deep(value: Any, validate: bool):
    """``None`` dumps to itself: it was taken for pydantic's "too deep to dump" and refused
    as past max_depth (found by tests/test_hostile.py); it is an invalid message."""
    with pytest.raises(normalizer.InvalidMessage) as caught:
        list(normalizer.repair([value], validate=validate))
    assert not isinstance(caught.value, LimitExceeded)
    assert str(caught.value).startswith(f"message 0: expected a message object, got {type(value).__name__}")
