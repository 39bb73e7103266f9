"""A record means a change: for every built-in profile, a repair that changes nothing
records nothing, and a second pass over repaired output records nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalizer
from normalizer.profiles._profiles import PROFILES

from test_stage import histories

odd = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", " ", "x", "text", "image_url"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["type", "text", "image_url", "x"]),
                                                                 inner, max_size=2),
    max_leaves=6,
)
# Content lists of any JSON values ([5, None], nested lists, untyped objects...): the core
# passes them through, so the stage meets them.
odd_user = st.builds(lambda c: {"role": "user", "content": c}, st.lists(odd, max_size=3))
odd_assistant = st.builds(lambda c: {"role": "assistant", "content": c}, st.lists(odd, min_size=1, max_size=3))
odd_histories = st.lists(st.one_of(odd_user, odd_assistant, histories), max_size=4).map(
    lambda chunks: [m for chunk in chunks for m in (chunk if isinstance(chunk, list) else [chunk])]
)


def _run(history: list[dict[str, Any]], profile: str) -> tuple[list[dict[str, Any]], list[Any]]:
    stream = normalizer.repair(copy.deepcopy(history), profile=profile)
    out = list(stream)
    return out, list(stream.report.records)


@pytest.mark.parametrize("profile", list(PROFILES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=odd_histories)
def test_every_record_is_a_change(profile: str, history: list[dict[str, Any]]) -> None:
    out, records = _run(history, profile)
    if out == history:
        assert [(r.kind, r.detail) for r in records] == []
    again, more = _run(out, profile)
    assert again == out
    assert [(r.kind, r.detail) for r in more] == []


@pytest.mark.parametrize("profile", ["openai", "strict", "anthropic"])
def test_parts_without_a_type_that_cannot_get_one_are_not_recorded(profile: str) -> None:
    # Before: add_part_type on every pass, for a content the stage left as it was.
    history = [{"role": "user", "content": [5, None]}]
    out, records = _run(history, profile)
    assert out == history and records == []
