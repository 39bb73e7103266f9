"""Regressions from the attack campaign: limits that must hold for every content shape,
merges and renames that must stay linear, fixed points, and misuse that must be refused."""

from __future__ import annotations

from typing import Any

import pytest

from normalizer import LimitExceeded, Normalizer, UsageError, repair

from helpers import A, Counting, T, U, call, repair_all, within_seconds


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
    out, _ = repair_all(history)
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


# ---------------------------------------------------------------- 5: max_held_bytes, every shape

MB = 1_000_000
_BIG = "x" * MB  # one string shared by every message: the test holds 1 MB, the core counts it per message


def _image_user() -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:," + _BIG}}]}


def test_deferred_users_with_image_parts_reach_max_held_bytes():
    # The attack: users carrying a 1 MB image part, deferred behind an open call, counted
    # 64 bytes each -- 2,000 of them held 1.94 GB with no LimitExceeded.
    core = Normalizer(max_held_bytes=10 * MB)
    core.feed(A(None, ["c1"]))
    for _ in range(9):
        core.feed(_image_user())
    with pytest.raises(LimitExceeded, match="max_held_bytes") as info:
        core.feed(_image_user())
    assert info.value.index == 10


@pytest.mark.parametrize("shape", [
    pytest.param({"role": "user", "content": [{"type": "image_url", "image_url": {"url": _BIG}}]}, id="nested-part"),
    pytest.param({"role": "user", "content": [_BIG]}, id="bare-string-part"),
    pytest.param({"role": "user", "content": "q", "metadata": {"blob": [_BIG]}}, id="extra-key"),
    pytest.param({"role": "user", "content": "q", _BIG: 1}, id="huge-key"),
    pytest.param({"role": "system", "content": [{"type": "text", "text": _BIG}]}, id="system-text-part"),
])
def test_held_size_counts_the_strings_of_every_shape(shape):
    core = Normalizer(max_held_bytes=3 * MB)
    core.feed(A(None, ["c1"]))
    core.feed(shape)
    core.feed(shape)
    assert MB * 2 <= core._held_bytes < MB * 2 + 1_000
    with pytest.raises(LimitExceeded, match="max_held_bytes"):
        core.feed(shape)


@pytest.mark.parametrize("fragment", [
    pytest.param(lambda i: A(None, tool_calls=[call(f"c{i}", "f", '"' + _BIG + '"')]), id="call-arguments"),
    pytest.param(lambda i: A(None, reasoning_content=_BIG), id="reasoning"),
    pytest.param(lambda i: A([{"type": "text", "text": _BIG}]), id="text-part"),
    pytest.param(lambda i: A("a", reasoning_details=[{"type": "reasoning.text", "text": _BIG}]), id="reasoning-details"),
])
def test_held_size_of_merged_fragments_counts_nested_strings(fragment):
    core = Normalizer(max_held_bytes=3 * MB)
    core.feed(fragment(0))
    core.feed(fragment(1))
    assert MB * 2 <= core._held_bytes < MB * 2 + 1_000
    with pytest.raises(LimitExceeded, match="max_held_bytes"):
        core.feed(fragment(2))


def test_results_with_list_content_count_their_parts():
    core = Normalizer(max_held_bytes=3 * MB)
    core.feed(A(None, ["c1", "c2", "c3", "c4"]))
    core.feed(T("c1", [{"type": "text", "text": _BIG}]))
    core.feed(T("c2", "y" * MB))
    assert MB * 2 <= core._held_bytes < MB * 2 + 1_000
    with pytest.raises(LimitExceeded, match="max_held_bytes"):
        core.feed(T("c3", [{"type": "image_url", "image_url": {"url": _BIG}}]))


def test_held_size_walks_containers_once_shared_or_cyclic():
    from normalizer._core._held import message_size as _size

    part = {"type": "text", "text": "abc"}
    shared = {"role": "user", "content": [part] * 1000}
    assert _size(shared) == _size({"role": "user", "content": [part]}) + 999
    loop: list[Any] = []
    loop.append(loop)
    assert _size({"role": "user", "content": loop}) == len("role") + len("user") + len("content") + 2 + 1


# ---------------------------------------------------------------- 7: merging text is linear

@pytest.mark.parametrize("role, key", [("assistant", "content"), ("user", "content"), ("assistant", "reasoning_content")])
def test_ten_thousand_fragments_merge_in_linear_time(role, key):
    n, piece = 10_000, "y" * 1_000  # joining a + "\n" + b per fragment: ~40 s; once: ~0.05 s
    with within_seconds(10):
        core = Normalizer()
        for _ in range(n):
            core.feed({"role": role, "content": "c", key: piece})
        [merged] = core.close()
    assert merged[key] == "\n".join([piece] * n)


def test_merged_parts_are_one_list_and_the_inputs_are_untouched():
    first = [{"type": "text", "text": "a"}]
    second = [{"type": "image_url", "image_url": {"url": "data:,x"}}]
    history = [A(first), A("b"), A(second), A(" "), A("c")]
    out, _ = repair_all(history)
    assert out == [A([*first, {"type": "text", "text": "b"}, *second, {"type": "text", "text": "c"}])]
    assert history[0]["content"] == [{"type": "text", "text": "a"}] and history[2]["content"] == second


def test_calls_of_a_merged_turn_keep_their_key_position():
    out, _ = repair_all([A("a"), A(None, ["c1"]), A("b", x_extra=1), T("c1")])
    assert list(out[0]) == ["role", "content", "tool_calls", "x_extra"]
    assert out[0]["content"] == "a\nb" and [c["id"] for c in out[0]["tool_calls"]] == ["c1"]


# ---------------------------------------------------------------- 16: one Normalizer per history


def test_feeding_from_inside_on_record_is_refused():
    calls: list[str] = []

    def on_record(record):
        calls.append(record.kind)
        core.feed(A("from the callback"))  # the re-entrant call

    core = Normalizer(on_record=on_record)
    core.feed(A("a"))
    with pytest.raises(UsageError, match="create one Normalizer per history"):
        core.feed(T("zz"))  # an orphan: dropped and recorded while it is placed
    assert calls == ["drop_orphan_result"]


def test_skipping_an_invalid_message_refuses_a_re_entrant_feed_and_stays_usable():
    def on_record(record):
        core.feed(U("from the callback"))

    core = Normalizer(on_invalid="skip", on_record=on_record)
    with pytest.raises(UsageError, match="still placing a message"):
        core.feed({"role": "user", "content": 3})
    assert core.feed(U("next")) == [] and core.close() == [U("next")]


def test_closing_from_inside_on_record_is_refused():
    def on_record(record):
        core.close()

    core = Normalizer(on_record=on_record)
    core.feed(A(None, ["c1"]))
    with pytest.raises(UsageError, match="one Normalizer per history"):
        core.close()  # the stub for c1 is recorded while the turn is flushed


def test_two_sync_streams_over_one_normalizer_are_refused():
    shared = Normalizer()
    first = repair([A("a"), A("b")], normalizer=shared)
    with pytest.raises(UsageError, match="create one Normalizer per history"):
        repair([U("other")], normalizer=shared)
    assert list(first) == [A("a\nb")]
    assert shared._owner is None  # released at its end


def test_a_normalizer_whose_stream_was_dropped_unstarted_is_free():
    shared = Normalizer()
    repair([A("a")], normalizer=shared).close()
    assert list(repair([A("b")], normalizer=shared)) == [A("b")]


# ---------------------------------------------------------------- 14: reasoning of another speaker


def _thinks(name: str | None = "alice") -> dict[str, Any]:
    return A(None, reasoning_content="R", **({"name": name} if name else {}))


def test_another_speakers_reasoning_does_not_split_a_turn_and_the_first_pass_is_a_fixed_point():
    once, report = repair_all([A("hi"), _thinks(), A("x")])
    assert once == [A("hi\nx")]
    [dropped] = [r for r in report.records if r.kind == "drop_empty_assistant"]
    assert dropped.dropped == _thinks() and dropped.input == [1]  # kept whole in the report
    twice, again = repair_all(once)
    assert twice == once and again.counts == {}


def test_another_speakers_reasoning_goes_to_that_speakers_next_turn():
    out, report = repair_all([A("hi"), _thinks(), A("x", name="alice")])
    assert out == [A("hi"), A(None, reasoning_content="R", name="alice") | {"content": "x"}]
    assert report.counts == {"merge_assistant": 1}
    assert repair_all(out)[0] == out


@pytest.mark.parametrize("after", [[U("u")], [], [A("y", name="bob")]], ids=["user", "eof", "third-speaker"])
def test_parked_reasoning_with_no_turn_of_its_speaker_is_dropped_whole(after):
    out, report = repair_all([A("hi"), _thinks(), *after])
    assert out == [A("hi"), *after]
    [dropped] = [r for r in report.records if r.kind == "drop_empty_assistant"]
    assert dropped.dropped == _thinks()
    assert repair_all(out)[0] == out
