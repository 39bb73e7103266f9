"""The shared vocabulary (``normalizer._content``): content predicates, the join of two
contents, its linear fold, and the in-place merge of two messages."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from normalizer._content import (
    Conflict,
    Fold,
    has_text,
    is_blank,
    is_blank_part,
    is_opaque,
    is_text_part,
    join,
    joinable,
    merge,
    part_kind,
    unfold,
)

IMAGE = {"type": "image_url", "image_url": {"url": "u"}}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, False),
        ("", False),
        (" \n", False),
        ("a", True),
        ([], False),
        ([""], False),
        (["x"], True),
        ([{"type": "text", "text": " "}], False),
        ([{"type": "input_text", "text": "x"}], True),
        ([{"text": "x"}], True),  # untyped with "text": a text part
        ([{"text": ""}], False),
        ([{"image_url": {"url": "u"}}], True),  # untyped without "text": an image, worth sending
        ([IMAGE], True),
        ([{}], False),
        ([None], False),
        ([5], True),
        ({}, False),
        ({"k": 1}, True),
    ],
)
def test_has_text(content: Any, expected: bool) -> None:
    assert has_text(content) is expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [(None, False), ("", True), ("  ", True), ("a", False), ([], True), ([{"type": "text", "text": ""}], True),
     ([IMAGE], False), ({}, False)],
)
def test_is_blank_and_none_is_absent_not_blank(content: Any, expected: bool) -> None:
    assert is_blank(content) is expected


def test_text_parts_and_their_kinds() -> None:
    assert [is_text_part(p) for p in ["x", {"type": "text", "text": "x"}, {"text": "x"}, {"type": "text", "text": 5},
                                      IMAGE, {"image_url": {}}, 5]] == [True, True, True, False, False, False, False]
    assert [is_blank_part(p) for p in ["", " ", "x", {"type": "text"}, {"type": "text", "text": "x"}, IMAGE]] == [
        True, True, False, True, False, False]
    assert [part_kind(p) for p in [IMAGE, {"image_url": {}}, {}, 5, "x"]] == ["image_url", "image_url", "empty", "int",
                                                                            "str"]


def test_opaque_state_is_recognised_by_its_keys() -> None:
    assert is_opaque({"role": "assistant", "finish_reason": "incomplete"})
    assert is_opaque({"role": "assistant", "codex_reasoning_items": [{"id": "r"}]})
    assert is_opaque({"role": "assistant", "codex_message_items": [{"id": "m"}]})
    assert not is_opaque({"role": "assistant", "codex_reasoning_items": [], "finish_reason": "stop"})


def test_join_spells_out_each_case() -> None:
    assert join("a", "b") == "a\nb"
    assert join("a", " ") == "a"
    assert join(" ", "b") == "b"
    assert join(None, "b") == "b"
    assert join("a", None) == "a"
    assert join("a", [IMAGE]) == [{"type": "text", "text": "a"}, IMAGE]
    assert join([IMAGE], "b") == [IMAGE, {"type": "text", "text": "b"}]
    assert join("", []) == ""
    assert [joinable(v) for v in [None, "", [], {}, 5]] == [True, True, True, False, False]


_values = st.one_of(
    st.none(),
    st.sampled_from(["", " ", "\n", "a", "b c", " d "]),
    st.lists(st.sampled_from([{"type": "text", "text": ""}, {"type": "text", "text": "t"}, "s", " ", IMAGE]),
             max_size=3),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_values, min_size=1, max_size=8))
def test_a_fold_equals_joining_one_by_one(values: list[Any]) -> None:
    fold = Fold(values[0])
    for value in values[1:]:
        fold.add(value)
    expected = functools.reduce(join, values)
    assert fold.value() == expected
    assert fold.has_text() == has_text(expected)


def _pairwise_merge(held: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    # The documented semantics, one pair at a time (the oracle for the folded merge).
    merged, conflicts = dict(held), []
    for key, value in new.items():
        if key in ("role", "tool_calls"):
            continue
        if key not in merged:
            merged[key] = value
            continue
        old = merged[key]
        if key in ("content", "reasoning_content", "reasoning") and joinable(old) and joinable(value):
            merged[key] = join(old, value)
        elif old == value or value is None:
            continue
        elif old is None:
            merged[key] = value
        elif isinstance(old, list) and isinstance(value, list):
            merged[key] = old + value
        else:
            merged[key] = value
            conflicts.append(Conflict(key, old, value))
    return merged, conflicts


_other = st.one_of(st.integers(0, 2), st.just({"k": 1}), st.lists(st.integers(0, 2), max_size=2))


@settings(max_examples=500, deadline=None)
@example([{"y": [{"type": "text", "text": ""}]}, {"y": []}, {"y": ""}, {"y": []}, {"y": [{"type": "text", "text": ""}]}])
@given(st.lists(st.dictionaries(st.sampled_from(["content", "reasoning_content", "name", "x", "y"]),
                                st.one_of(_values, _other), max_size=4), min_size=1, max_size=6))
def test_merging_in_place_equals_merging_pair_by_pair(messages: list[dict[str, Any]]) -> None:
    frozen = repr(messages)
    expected, conflicts = dict(messages[0]), []
    held, folds, owned, got = dict(messages[0]), {}, set(), []  # type: ignore[var-annotated]
    for message in messages[1:]:
        expected, more = _pairwise_merge(expected, message)
        conflicts += more
        got += merge(held, message, folds, owned)
    assert unfold(held, folds) == expected
    assert list(held) == list(expected)  # and the keys keep their order
    assert got == conflicts
    assert repr(messages) == frozen  # the inputs' lists were never extended in place


def test_merge_leaves_role_and_calls_to_the_caller() -> None:
    held = {"role": "assistant", "content": "a", "tool_calls": [1]}
    folds: dict[str, Fold] = {}
    assert merge(held, {"role": "user", "content": "b", "tool_calls": [2], "name": "n"}, folds) == []
    assert unfold(held, folds) == {"role": "assistant", "content": "a\nb", "tool_calls": [1], "name": "n"}


def test_a_list_that_replaced_a_value_is_never_extended_in_place() -> None:
    # Found by hypothesis: a key's list (ours, extended in place) replaced by a string, then
    # by an input's list, was extended in place by the next list: the input changed.
    messages = [{"y": [{"type": "text", "text": ""}]}, {"y": []}, {"y": ""}, {"y": []},
                {"y": [{"type": "text", "text": ""}]}]
    frozen = repr(messages)
    held, folds, owned = dict(messages[0]), {}, set()  # type: ignore[var-annotated]
    for message in messages[1:]:
        merge(held, message, folds, owned)
    assert repr(messages) == frozen
    assert held == {"y": [{"type": "text", "text": ""}]}
