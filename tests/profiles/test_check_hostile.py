"""check() over hostile input: any JSON value as a message gives findings (or an InputError
naming where), never a TypeError or any other crash."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalizer
from normalizer.profiles._check import Violation
from normalizer._errors import InputError
from normalizer.profiles._profiles import PROFILES

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
FIELDS = ["role", "content", "tool_calls", "tool_call_id", "name", "id", "type", "function", "arguments", "text",
          "reasoning_content", "prefix", "finish_reason"]
roles = st.sampled_from(["system", "developer", "user", "assistant", "tool"]) | json_values
calls = st.lists(st.dictionaries(st.sampled_from(FIELDS), json_values | st.dictionaries(st.sampled_from(FIELDS),
                                                                                      json_values)), max_size=3)
messages = json_values | st.fixed_dictionaries(
    {"role": roles},
    optional={"content": json_values, "tool_calls": json_values | calls, "tool_call_id": json_values,
              "name": json_values, "reasoning_content": json_values},
)


@pytest.mark.parametrize("profile", list(PROFILES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=st.lists(messages, max_size=6))
def test_check_over_any_json_only_finds_or_raises_input_errors(profile: str, history: list[Any]) -> None:
    try:
        found = normalizer.check(history, profile=profile)
    except InputError:
        return
    assert all(isinstance(v, Violation) for v in found)


@pytest.mark.parametrize("role", [["user"], {"user": 1}, 5, None, True])
def test_a_role_that_is_not_a_string_is_a_shape_finding(role: Any) -> None:
    found = normalizer.check([{"role": role}])
    assert [(v.index, v.rule, v.key) for v in found] == [(0, "shape", "shape")]
    assert found[0].message == ("not a chat message: expected an object with role system, developer, user, "
                                "assistant or tool")


@pytest.mark.parametrize(
    ("message", "what"),
    [
        ({"role": "user", "content": 5}, "content: expected a list or a string, got int 5"),
        ({"role": "user", "content": {"a": 1}}, "content: expected a list or a string, got dict {'a': 1}"),
        ({"role": "assistant", "tool_calls": "x"}, "tool_calls: expected a list, got str 'x'"),
        ({"role": "assistant", "tool_calls": [5]}, "tool_calls.0: expected an object, got int 5"),
    ],
)
def test_a_message_the_repair_would_refuse_is_a_shape_finding(message: dict[str, Any], what: str) -> None:
    # Before: check said nothing (or crashed) while repair refused the message.
    found = normalizer.check([{"role": "user", "content": "q"}, message], profile="openai")
    assert [(v.index, v.rule) for v in found] == [(1, "shape")]
    assert found[0].message.startswith(f"not a chat message: {what}. ")
