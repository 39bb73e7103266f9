"""Regressions from the attack campaign: limits that must hold for every content shape,
merges and renames that must stay linear, fixed points, and misuse that must be refused."""

from __future__ import annotations

from typing import Any

import pytest

from normalizer import Normalizer

from helpers import A, Counting, T, call, repair, within_seconds


# ---------------------------------------------------------------- 8: duplicate call ids


def _same_id_calls(n: int, call_id: str = "a") -> list[dict[str, Any]]:
    # Different calls (different arguments) all using one id: every one after the first is renamed.
    return [call(call_id, "f", f'{{"i": {i}}}') for i in range(n)]


def test_renaming_duplicate_ids_probes_a_constant_number_of_ids_per_call():
    n = 2_000
    core = Normalizer(max_held_messages=n + 1)
    registry = core._calls = Counting()
    unanswered = core._unanswered = Counting()
    core.feed(A(None, tool_calls=_same_id_calls(n)))
    for _ in range(n - 1):  # every result says "a": each answers the next rename in order
        core.feed(T("a"))
    # A few probes per call and per result; probing a, a_dup, a_dup2, ... from the start
    # for each rename (or scanning the answered renames per result) is n*n/2 = 2,000,000.
    assert registry.probes <= 10 * n
    assert unanswered.probes <= 10 * n


def test_renamed_ids_are_unchanged_and_unique():
    history = [
        A(None, tool_calls=[call("a", "f", "1"), call("a", "f", "2"), call("a_dup2", "g"), call("a", "f", "3")]),
        A(None, tool_calls=[call("a", "f", "4")]),
        T("a", "r1"), T("a", "r2"), T("a_dup2", "rg"), T("a", "r3"), T("a", "r4"),
    ]
    out, _ = repair(history)
    ids = [c["id"] for c in out[0]["tool_calls"]]
    assert ids == ["a", "a_dup", "a_dup2", "a_dup3", "a_dup4"]
    assert [(m["tool_call_id"], m["content"]) for m in out[1:]] == [
        ("a", "r1"), ("a_dup", "r2"), ("a_dup2", "rg"), ("a_dup3", "r3"), ("a_dup4", "r4"),
    ]


def test_twenty_thousand_calls_sharing_one_id_are_renamed_in_linear_time():
    n = 20_000  # quadratic probing took 85 s here; linear is well under a second
    with within_seconds(30):
        core = Normalizer(max_held_messages=n + 1)
        out = core.feed(A(None, tool_calls=_same_id_calls(n)))
        for _ in range(n):
            out += core.feed(T("a"))
        out += core.close()
    assert len(out) == n + 1
    ids = [c["id"] for c in out[0]["tool_calls"]]
    assert ids[:3] == ["a", "a_dup", "a_dup2"] and ids[-1] == f"a_dup{n - 1}"
    assert len(set(ids)) == n
    assert [m["tool_call_id"] for m in out[1:]] == ids
