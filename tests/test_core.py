"""Scenario tests: an input history -> the exact output and the repairs recorded."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import normalizer
from normalizer import (
    DEFAULT_STUB_TEXT,
    InvalidMessage,
    LimitExceeded,
    Normalizer,
    OrphanResultError,
    UsageError,
)

from helpers import A, S, T, U, assert_nothing_lost, assert_pairing_rules, call, kinds, repair_all

STUB = DEFAULT_STUB_TEXT


def tool_calls(*ids: str) -> list[dict]:
    return [call(c) for c in ids]


# ---------------------------------------------------------------- split assistant turns


def test_parallel_calls_split_across_assistants_merge_into_one():
    out, report = repair_all([U(), A(None, ["c1"]), A(None, ["c2"]), T("c1"), T("c2")])
    assert out == [
        U(),
        {"role": "assistant", "content": None, "tool_calls": tool_calls("c1", "c2")},
        T("c1"),
        T("c2"),
    ]
    assert kinds(report) == {"merge_assistant": 1}
    [record] = report.records
    assert record.input == [1, 2] and record.output == 1


def test_text_then_tool_call_assistant_merge():
    out, report = repair_all([U(), A("Let me check."), A("", ["c1"]), T("c1")])
    assert out == [U(), A("Let me check.", ["c1"]), T("c1")]
    assert kinds(report) == {"merge_assistant": 1}


def test_three_split_fragments_merge_into_one():
    out, report = repair_all([U(), A("One."), A("Two."), A(None, ["c1"]), T("c1")])
    assert out == [U(), A("One.\nTwo.", ["c1"]), T("c1")]
    assert report.records[0].input == [1, 2, 3]


def test_separated_by_a_tool_result_are_distinct_rounds():
    history = [U(), A(None, ["c1"]), T("c1"), A(None, ["c2"]), T("c2"), A("done")]
    out, report = repair_all(history)
    assert out == history
    assert not report.changed


def test_separated_by_a_user_are_untouched():
    history = [U("a"), A("one"), U("b"), A("two")]
    out, report = repair_all(history)
    assert out == history and not report.changed


def test_two_text_only_assistants_join_with_newline():
    out, _ = repair_all([A("First part."), A("Second part.")])
    assert out == [A("First part.\nSecond part.")]


def test_merge_keeps_whitespace_of_each_part():
    out, _ = repair_all([A("  indented\n"), A("next  ")])
    assert out[0]["content"] == "  indented\n\nnext  "


def test_reasoning_of_both_fragments_survives_the_merge():
    out, _ = repair_all([
        A("a", reasoning_content="think 1"),
        A(None, ["c1"], reasoning_content="think 2"),
        T("c1"),
    ])
    assert out[0]["reasoning_content"] == "think 1\nthink 2"
    assert out[0]["content"] == "a"


def test_keys_only_the_later_fragment_has_are_kept_and_conflicts_recorded():
    out, report = repair_all([A("a", finish_reason="stop", x_a=1), A("b", finish_reason="tool_calls", x_b=2)])
    assert out == [A("a\nb", finish_reason="tool_calls", x_a=1, x_b=2)]
    [conflict] = [r for r in report.records if r.kind == "merge_conflict"]
    assert conflict.dropped == {"finish_reason": "stop"}


def test_list_content_is_kept_whole_when_merging_with_text():
    image = {"type": "image_url", "image_url": {"url": "data:,x"}}
    out, _ = repair_all([A("look"), A([image, {"type": "text", "text": "see"}])])
    assert out[0]["content"] == [{"type": "text", "text": "look"}, image, {"type": "text", "text": "see"}]


def test_exact_duplicate_call_kept_once():
    out, report = repair_all([A(None, ["c1"]), A(None, ["c1"]), T("c1")])
    assert out == [A(None, ["c1"]), T("c1")]
    assert kinds(report) == {"merge_assistant": 1, "drop_duplicate_call": 1}
    assert [(r.kind, r.input, r.dropped) for r in report.records] == [
        ("drop_duplicate_call", [1], call("c1")), ("merge_assistant", [0, 1], None)]


def test_same_id_for_different_calls_is_renamed_and_results_follow():
    first = call("c1", "read")
    second = call("c1", "write")
    out, report = repair_all([
        {"role": "assistant", "content": None, "tool_calls": [first]},
        {"role": "assistant", "content": None, "tool_calls": [second]},
        T("c1", "read result"),
        T("c1", "write result"),
    ])
    assert [c["id"] for c in out[0]["tool_calls"]] == ["c1", "c1_dup"]
    assert out[1:] == [T("c1", "read result"), T("c1_dup", "write result")]
    assert {"rename_duplicate_call_id", "rename_result_id"} <= set(report.counts)


def test_different_names_are_different_speakers():
    history = [A("a", name="alice"), A("b", name="bob")]
    out, report = repair_all(history)
    assert out == history and not report.changed


def test_valid_parallel_call_history_is_not_repaired():
    history = [S(), U(), A(None, ["c1", "c2"]), T("c1"), T("c2"), A("done"), U("thanks")]
    out, report = repair_all(history)
    assert out == history
    assert report.counts == {} and report.records == []


@pytest.mark.parametrize(
    "interim",
    [
        {"finish_reason": "incomplete"},
        {"codex_reasoning_items": [{"type": "reasoning", "encrypted_content": "gAAA"}]},
        {"codex_message_items": [{"type": "message"}]},
    ],
)
def test_codex_interim_turns_stay_separate_and_whole(interim):
    opaque = {"role": "assistant", "content": "", **interim}
    out, report = repair_all([U(), A("before"), opaque, A("after")])
    assert out == [U(), A("before"), opaque, A("after")]
    assert not report.changed


# ---------------------------------------------------------------- empty content next to calls


@pytest.mark.parametrize("content", ["", "  \n", [], [{"type": "text", "text": ""}]])
def test_empty_content_next_to_tool_calls_becomes_null(content):
    out, report = repair_all([U(), A(content, ["c1"]), T("c1")])
    assert out[1] == A(None, ["c1"])
    assert kinds(report) == {"empty_content_to_null": 1}


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "hi"}],
        [{"type": "image_url", "image_url": {"url": "data:,x"}}],
        "hi",
        None,
    ],
)
def test_content_with_substance_next_to_tool_calls_is_kept(content):
    history = [U(), A(content, ["c1"]), T("c1")]
    out, report = repair_all(history)
    assert out == history and not report.changed


def test_assistant_with_text_and_no_calls_is_untouched():
    out, report = repair_all([U(), A("hello")])
    assert out == [U(), A("hello")] and not report.changed


@pytest.mark.parametrize("message", [U(""), S(""), U([]), S("x")])
def test_user_and_system_content_untouched(message):
    out, report = repair_all([message])
    assert out == [message] and not report.changed


# ---------------------------------------------------------------- empty assistant messages


@pytest.mark.parametrize("content", ["", None, "   ", []])
def test_empty_assistant_is_dropped_and_kept_in_the_report(content):
    empty = A(content)
    out, report = repair_all([U("a"), empty, A("b")] if False else [U("a"), empty])
    assert out == [U("a")]
    [record] = report.records
    assert record.kind == "drop_empty_assistant" and record.dropped == empty and record.input == [1]


def test_reasoning_only_assistant_merges_into_the_next_assistant():
    out, report = repair_all([U(), A(None, reasoning_content="hmm"), A("answer")])
    assert out == [U(), A("answer", reasoning_content="hmm")]
    assert kinds(report) == {"merge_assistant": 1}


def test_reasoning_only_assistant_with_no_follower_is_dropped_with_its_reasoning_recorded():
    thinking = A("", reasoning_content="deep thought")
    out, report = repair_all([U("a"), thinking, U("b")])
    assert out == [U("a\nb")]
    dropped = [r for r in report.records if r.kind == "drop_empty_assistant"]
    assert dropped[0].dropped["reasoning_content"] == "deep thought"


def test_dropping_an_empty_assistant_lets_the_users_around_it_merge():
    out, report = repair_all([U("a"), A(""), U("b")])
    assert out == [U("a\nb")]
    assert kinds(report) == {"drop_empty_assistant": 1, "merge_user": 1}
    merge = next(r for r in report.records if r.kind == "merge_user")
    assert merge.input == [0, 2] and merge.output == 0


# ---------------------------------------------------------------- tool-call hygiene


@pytest.mark.parametrize("calls", [[], None])
def test_empty_tool_calls_key_is_removed(calls):
    out, report = repair_all([U(), {"role": "assistant", "content": "hi", "tool_calls": calls}])
    assert out == [U(), A("hi")]
    assert kinds(report) == {"remove_empty_tool_calls": 1}


def test_dict_arguments_are_encoded_and_empty_ones_become_braces():
    out, report = repair_all([
        {"role": "assistant", "content": None, "tool_calls": [
            call("c1", arguments={"path": "a b"}), call("c2", arguments=""), call("c3", arguments=None),
        ]},
        T("c1"), T("c2"), T("c3"),
    ])
    args = [c["function"]["arguments"] for c in out[0]["tool_calls"]]
    assert args == ['{"path":"a b"}', "{}", "{}"]
    assert kinds(report) == {"encode_arguments": 1, "default_arguments": 2}


def test_call_id_only_is_used_as_id():
    responses_style = {"call_id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    out, report = repair_all([{"role": "assistant", "content": None, "tool_calls": [responses_style]}, T("call_9")])
    assert out[0]["tool_calls"][0]["id"] == "call_9"
    assert out[1] == T("call_9")
    assert kinds(report) == {"call_id_as_id": 1}


def test_call_without_function_name_is_dropped_and_recorded():
    nameless = {"id": "c2", "type": "function", "function": {"arguments": "{}"}}
    out, report = repair_all([
        U(), {"role": "assistant", "content": "x", "tool_calls": [call("c1"), nameless]}, T("c1"),
    ])
    assert out == [U(), A("x", ["c1"]), T("c1")]
    [record] = [r for r in report.records if r.kind == "drop_nameless_call"]
    assert record.dropped == nameless


def test_another_speakers_message_of_nameless_calls_only_is_dropped_without_ending_the_turn():
    # It has nothing to send (its only call is dropped): held as a turn of its own, it ended
    # "Let me look." there and then vanished, leaving two turns of one speaker side by side
    # that only a second repair merged. Dropped at once, kept whole, the turn goes on.
    nameless = {"role": "assistant", "name": "bot", "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "", "arguments": "{}"}}]}
    history = [U("hi"), A("Let me look."), nameless, A(None, ["c1"]), T("c1")]
    out, report = repair_all(history)
    assert out == [U("hi"), A("Let me look.", ["c1"]), T("c1")]
    assert [(r.kind, r.detail, r.input, r.dropped) for r in report.records] == [
        ("drop_empty_assistant", "dropped assistant message 2: it has no text and no tool call with a function name",
         [2], nameless),
        ("merge_assistant", "merged assistant messages 1, 3: one model turn stored as 2 messages", [1, 3], None),
    ]
    again, second = repair_all(out)
    assert again == out and second.records == []
    # A flat call ({"name", "arguments"}) has a name: that message is sent, not dropped.
    flat = {"role": "assistant", "name": "bot", "tool_calls": [{"id": "c0", "name": "f", "arguments": "{}"}]}
    out, report = repair_all([U("hi"), A("Let me look."), flat, T("c0")])
    assert [m.get("name") for m in out] == [None, None, "bot", None]
    assert kinds(report) == {"lift_flat_call": 1}


# ---------------------------------------------------------------- results pair with calls


def test_user_between_call_and_result_is_moved_after_the_tool_block():
    out, report = repair_all([U("q"), A("", ["c1"]), U("x"), T("c1")])
    assert out == [U("q"), A(None, ["c1"]), T("c1"), U("x")]
    assert set(report.counts) == {"move_result", "empty_content_to_null"}


def test_system_between_call_and_result_is_moved_after_the_tool_block():
    out, _ = repair_all([U("q"), A(None, ["c1"]), S("note"), T("c1"), A("done")])
    assert out == [U("q"), A(None, ["c1"]), T("c1"), S("note"), A("done")]


def test_orphan_result_is_dropped_with_its_content():
    orphan = T("zz", "lost output")
    out, report = repair_all([U(), orphan, A("hi")])
    assert out == [U(), A("hi")]
    [record] = report.records
    assert record.kind == "drop_orphan_result" and record.dropped == orphan and record.input == [1]


def test_second_result_for_an_answered_id_is_dropped():
    out, report = repair_all([U(), A(None, ["c1", "c2"]), T("c1", "a"), T("c1", "b"), T("c2")])
    assert out == [U(), A(None, ["c1", "c2"]), T("c1", "a"), T("c2")]
    assert kinds(report) == {"drop_duplicate_result": 1}


def test_result_after_its_round_ended_is_an_orphan():
    out, report = repair_all([U(), A(None, ["c1"]), T("c1"), A("x"), T("c1", "late")])
    assert out == [U(), A(None, ["c1"]), T("c1"), A("x")]
    # A new turn started: the late result answers nothing of it (an orphan, not a duplicate).
    assert kinds(report) == {"drop_orphan_result": 1}


def test_orphan_kept_as_user_text():
    out, report = repair_all([U("q"), T("zz", "output")], orphan_results="keep_as_user")
    assert out == [U("q\n[tool result for call 'zz']\noutput")]
    assert kinds(report) == {"orphan_result_to_user": 1, "merge_user": 1}


def test_orphan_error_names_the_index():
    with pytest.raises(OrphanResultError, match="message 1"):
        repair_all([U(), T("zz")], orphan_results="error")


def test_results_are_put_in_call_order():
    out, report = repair_all([U(), A(None, ["c1", "c2", "c3"]), T("c3"), T("c1"), T("c2")])
    assert out == [U(), A(None, ["c1", "c2", "c3"]), T("c1"), T("c2"), T("c3")]
    assert kinds(report) == {"reorder_results": 1}


def test_result_without_id_answers_the_next_call_by_position():
    out, report = repair_all([A(None, ["c1", "c2"]), T(None, "one"), T("", "two")])
    assert out == [A(None, ["c1", "c2"]), T("c1", "one"), T("c2", "two")]
    assert kinds(report) == {"assign_result_id": 2}


# ---------------------------------------------------------------- unanswered calls


def test_unanswered_calls_get_stubs_in_call_order_when_the_turn_ends():
    out, report = repair_all([U(), A(None, ["c1", "c2", "c3"]), T("c2"), U("next")])
    assert out == [U(), A(None, ["c1", "c2", "c3"]), T("c1", STUB), T("c2"), T("c3", STUB), U("next")]
    stubs = [r for r in report.records if r.kind == "stub_missing_result"]
    assert [r.output for r in stubs] == [2, 4]


def test_stub_text_is_configurable():
    out, _ = repair_all([A(None, ["c1"]), A("next")], stub_text="(none)")
    assert out[1] == T("c1", "(none)")


def test_a_new_assistant_round_stubs_the_previous_calls():
    out, _ = repair_all([U(), A(None, ["c1"]), T("c1"), A(None, ["c2"]), A("x") | {"name": "other"}])
    assert out[3:5] == [A(None, ["c2"]), T("c2", STUB)]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("stub", [U(), A("x", ["c1"]), T("c1", STUB)]),
        ("keep", [U(), A("x", ["c1"])]),
        ("drop", [U(), A("x")]),
    ],
)
def test_trailing_calls_policy_at_end_of_input(policy, expected):
    out, report = repair_all([U(), A("x", ["c1"])], trailing_calls=policy)
    assert out == expected
    if policy == "drop":
        assert report.records[0].dropped == call("c1")


def test_trailing_drop_of_a_tool_only_turn_drops_the_turn_and_keeps_it_in_the_report():
    out, report = repair_all([U("a"), A(None, ["c1"])], trailing_calls="drop")
    assert out == [U("a")]
    assert set(report.counts) == {"drop_unanswered_call", "drop_empty_assistant"}
    assert report.records[0].dropped == call("c1")


@pytest.mark.parametrize("policy", ["keep", "drop"])
def test_calls_followed_by_a_user_are_not_trailing(policy):
    # The conversation moved on without the results: the turn ended, so the calls get stubs.
    out, _ = repair_all([U("a"), A(None, ["c1"]), U("b")], trailing_calls=policy)
    assert out == [U("a"), A(None, ["c1"]), T("c1", STUB), U("b")]


def test_partial_results_at_end_of_input_with_keep():
    out, _ = repair_all([U(), A(None, ["c1", "c2"]), T("c2")], trailing_calls="keep")
    assert out == [U(), A(None, ["c1", "c2"]), T("c2")]


# ---------------------------------------------------------------- users


def test_consecutive_users_merge():
    out, report = repair_all([U("a"), U("b"), U("c")])
    assert out == [U("a\nb\nc")]
    assert [(r.kind, r.input, r.output) for r in report.records] == [("merge_user", [0, 1, 2], 0)]


def test_users_with_different_names_do_not_merge():
    history = [U("a", name="x"), U("b", name="y")]
    out, report = repair_all(history)
    assert out == history and not report.changed


def test_users_deferred_behind_a_tool_block_merge_with_each_other():
    out, _ = repair_all([A(None, ["c1"]), U("x"), U("y"), T("c1")])
    assert out == [A(None, ["c1"]), T("c1"), U("x\ny")]


# ---------------------------------------------------------------- the core's contract


def test_input_is_never_mutated():
    history = [U("a"), U("b"), A("", ["c1"]), A("x", [], reasoning_content="r"), T("c1"), T("zz")]
    snapshot = copy.deepcopy(history)
    for validate in (True, False):
        repair_all(history, validate=validate)
        assert history == snapshot


def test_validation_off_gives_the_same_output():
    history = [U("a"), U("b"), A("", ["c1"]), A("x"), T("c1"), T("zz"), A(None, ["c2"])]
    assert repair_all(history)[0] == repair_all(history, validate=False)[0]


def test_unknown_keys_survive():
    history = [U("a", x_trace="t1"), A("b", x_meta={"k": [1]}), ]
    out, _ = repair_all(history)
    assert out == history


def test_pydantic_models_are_accepted():
    from pydantic import BaseModel

    class Msg(BaseModel):
        role: str
        content: str | None = None
        refusal: str | None = None

    out, _ = repair_all([Msg(role="user", content="hi")])
    assert out == [U("hi")]


def test_invalid_message_names_index_and_field():
    with pytest.raises(InvalidMessage) as info:
        repair_all([U(), {"role": "assistant", "content": 5}])
    assert info.value.index == 1 and info.value.field == "content"
    assert "message 1" in str(info.value) and "content" in str(info.value)


def test_invalid_message_skipped_and_recorded():
    bad = {"role": "robot", "content": "x"}
    out, report = repair_all([U(), bad, A("hi")], on_invalid="skip")
    assert out == [U(), A("hi")]
    [record] = report.records
    assert record.kind == "skip_invalid" and record.dropped == bad and record.input == [1]


def test_feed_after_close_is_a_usage_error():
    n = Normalizer()
    n.close()
    assert n.close() == []
    with pytest.raises(UsageError, match="after close"):
        n.feed(U())


def test_an_error_poisons_the_instance():
    n = Normalizer(orphan_results="error")
    with pytest.raises(OrphanResultError):
        n.feed(T("x"))
    with pytest.raises(UsageError, match="raised an error"):
        n.feed(U())


def test_unknown_option_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown option 'orphan'"):
        Normalizer(orphan="drop")
    with pytest.raises(UsageError, match="trailing_calls"):
        Normalizer(trailing_calls="maybe")


def test_feed_returns_what_became_final():
    n = Normalizer()
    assert n.feed(U("a")) == []
    assert n.feed(A("b")) == []  # the turn may continue (and the user waits for it)
    assert n.feed(A(None, ["c1"])) == []
    assert n.feed(T("c1")) == [U("a"), A("b", ["c1"]), T("c1")]  # complete: flushed at once
    assert n.feed(U("c")) == []
    assert n.close() == [U("c")]


def test_limit_on_fragments_of_one_turn():
    n = Normalizer(max_turn_fragments=3)
    for _ in range(3):
        n.feed(A("x"))
    with pytest.raises(LimitExceeded, match="max_turn_fragments") as info:
        n.feed(A("x"))
    assert info.value.index == 3


def test_limit_on_held_messages():
    n = Normalizer(max_held_messages=2)
    n.feed(A(None, ["c1", "c2", "c3", "c4"]))
    n.feed(T("c1"))
    n.feed(T("c2"))
    with pytest.raises(LimitExceeded, match="max_held_messages"):
        n.feed(T("c3"))


def test_limit_on_held_bytes():
    n = Normalizer(max_held_bytes=1000)
    n.feed(A(None, ["c1", "c2"]))
    with pytest.raises(LimitExceeded, match="max_held_bytes"):
        n.feed(T("c1", "x" * 2000))


def test_report_serialises_and_counts_messages():
    out, report = repair_all([U(), T("zz"), A(""), A("x")])
    data = report.model_dump_json()
    assert '"drop_orphan_result"' in data
    assert report.messages_in == 4 and report.messages_out == len(out) == 2


def test_the_library_s_reports_are_those_report_validation_makes():
    # new_report: Report(...) without the validation (and without building its schema).
    from normalizer._report import Report, new_report

    seen = []
    made, validated = new_report(7, seen.append), Report(max_records=7, on_record=seen.append)
    assert made == validated and made.model_fields_set == validated.model_fields_set
    assert made.counts == {} and made.records == [] and made.counts is not new_report().counts
    assert new_report() == Report() and new_report().max_records == Report().max_records
    made.add("merge_user", "x", input=[1], output=0)
    assert len(seen) == 1 and Report.model_validate_json(made.model_dump_json()).counts == {"merge_user": 1}
    assert Normalizer(max_records=3).report == Report(max_records=3)
    # every field given to model_construct (not filled by pydantic's default machinery): in
    # the order pydantic keeps them, and a set of fields its own, which an assignment adds to
    assert list(new_report().__dict__.items()) == list(Report().__dict__.items())
    one, two = new_report(), new_report()
    one.messages_in = 3
    assert one.model_fields_set == {"max_records", "on_record", "messages_in"}
    assert two.model_fields_set == {"max_records", "on_record"}


def test_report_records_are_bounded_but_all_reach_the_callback():
    seen = []
    history = [U()] + [T(f"z{i}") for i in range(50)]
    _, report = repair_all(history, max_records=10, on_record=seen.append)
    assert len(report.records) == 10 and report.records_omitted == 40
    assert len(seen) == 50 and report.counts["drop_orphan_result"] == 50


@pytest.mark.parametrize("listen", [False, True])
def test_notes_past_max_records_are_counted_as_records_are(listen):
    """Report.add_notes (the notes of one emitted message) is add() per note, whether the
    kept records are full or not, with or without a listener."""
    from normalizer._report import Note, Report

    notes = [Note(f"kind{i % 3}", f"detail {i}", [i], {"i": i} if i % 2 else None) for i in range(7)]
    seen_a, seen_b = [], []
    a = Report(max_records=4, on_record=seen_a.append if listen else None)
    b = Report(max_records=4, on_record=seen_b.append if listen else None)
    for output in (0, None, 2):
        a.add_notes(notes, output)
        for note in notes:
            b.add(note.kind, note.detail, input=note.inputs, output=output, dropped=note.dropped)
    assert a.model_dump() == b.model_dump() and a.records_omitted == 17 and seen_a == seen_b
    assert list(a.counts) == list(b.counts)  # kinds in the order add() meets them (the dump's order)
    assert len(seen_a) == (21 if listen else 0)


def test_a_lazy_note_detail_is_made_only_for_a_record_built():
    """Note.detail may be a function making the sentence: it runs once per record built
    (the record holds its str), never for a note that is only counted."""
    from normalizer._report import Note, Report

    made: list[int] = []

    def lazy(i: int) -> Note:
        def detail() -> str:
            made.append(i)
            return f"detail {i!r}"
        return Note("kind", detail, [i], None)

    report = Report(max_records=2)
    report.add_notes([lazy(0), lazy(1), lazy(2)], 5)
    report.add_notes([lazy(3)], None)
    assert made == [0, 1] and report.counts == {"kind": 4} and report.records_omitted == 2
    assert [(r.detail, r.input, r.output) for r in report.records] == [("detail 0", [0], 5), ("detail 1", [1], 5)]
    assert all(type(r.detail) is str for r in report.records)

    def never() -> str:
        raise AssertionError("a counted-only note made its detail")

    report.add_notes([Note("kind", never, [9], None)], 0)  # full, nobody listens: counted only
    assert report.counts == {"kind": 5} and report.records_omitted == 3
    seen: list[Any] = []
    listened = Report(max_records=0, on_record=seen.append)  # a listener gets every record, made
    listened.add_notes([lazy(7)], 1)
    assert made[-1] == 7 and [r.detail for r in seen] == ["detail 7"] and listened.records == []


def test_lazy_details_read_as_the_sentences_they_always_were():
    """The records of a profile that rewrites ids (the lazy rewrite_call_id, rewrite_result_id,
    stub_missing_result, strip_reasoning, drop_unknown_fields...) say exactly what they said
    as f-strings, whether made while the report keeps records or for a listener past it."""
    history = [U("q"),
               A("", ["c1", "c2"], reasoning_content="plan", source_fields={"id": 7}),
               T("c1", "one"), U("next")]
    seen: list[Any] = []
    out, report = repair_all(history, profile="mistral", max_records=1, on_record=seen.append)
    new1, new2 = out[1]["tool_calls"][0]["id"], out[1]["tool_calls"][1]["id"]
    details: dict[str, list[str]] = {}
    for r in seen:
        details.setdefault(r.kind, []).append(r.detail)
    assert details["rewrite_call_id"] == [
        f"call ids rewritten to the mistral9 style: 'c1' -> {new1!r}, 'c2' -> {new2!r}"]
    assert details["rewrite_result_id"] == [f"tool_call_id 'c1' -> {new1!r}, as its call",
                                            f"tool_call_id 'c2' -> {new2!r}, as its call"]
    assert details["stub_missing_result"] == ["call 'c2' had no result; added a stub result"]
    assert details["strip_reasoning"] == ["removed reasoning_content: mistral rejects reasoning fields in the history"]
    assert details["drop_unknown_fields"] == ["removed source_fields: mistral rejects fields it does not know"]
    assert all(type(r.detail) is str for r in seen) and report.records == seen[:1]
    assert repair_all(history, profile="mistral", max_records=10**6)[1].records == seen


def test_seed_histories_obey_the_rules_and_lose_nothing():
    history = [
        S(), U("q"), A("Let me look", reasoning_content="plan"), A("", ["c1", "c2"]),
        U("hurry"), T("c2", "two"), T("zz", "stray"), A(None, ["c3"]), T("c3", "three"),
        A(""), U("thanks"),
    ]
    out, report = repair_all(history)
    assert_pairing_rules(out)
    assert_nothing_lost(history, out, report)
    assert repair_all(out)[0] == out


def test_normalize_sync_is_exported_with_report():
    stream = normalizer.repair([A("a"), A("b")])
    assert list(stream) == [A("a\nb")]
    assert stream.report.counts == {"merge_assistant": 1}


def test_text_then_calls_stay_apart_when_the_profile_wants_them_apart():
    history = [U(), A("Let me check."), A(None, ["c1"]), T("c1")]
    out, report = repair_all(history, merge_text_then_calls=False)
    assert out == history and not report.changed
    # other splits still merge
    out, _ = repair_all([U(), A("a"), A("b")], merge_text_then_calls=False)
    assert out == [U(), A("a\nb")]


def test_a_failing_source_says_where_and_keeps_its_type():
    def source():
        yield U("a")
        yield A("b")
        raise ConnectionError("db gone")

    with pytest.raises(ConnectionError) as info:
        list(normalizer.repair(source()))
    assert info.value.__notes__ == ["raised by the message source while reading message 2 (normalizer)"]


def test_our_own_errors_get_no_source_note():
    with pytest.raises(InvalidMessage) as info:
        list(normalizer.repair([U(), {"role": "user", "content": 5}]))
    assert not getattr(info.value, "__notes__", None)


# ---------------------------------------------------------------- found in review


def test_a_later_reasoning_object_wins_and_the_earlier_is_recorded() -> None:
    history = [{"role": "assistant", "content": "x", "reasoning": {"effort": "high"}},
               {"role": "assistant", "content": "y", "reasoning": {"effort": "low"}}]
    out, report = repair_all(history)
    assert out == [{"role": "assistant", "content": "x\ny", "reasoning": {"effort": "low"}}]
    assert [(r.kind, r.dropped) for r in report.records] == [
        ("merge_assistant", None), ("merge_conflict", {"reasoning": {"effort": "high"}})]


def test_dropping_a_named_empty_assistant_between_turns_is_a_fixed_point() -> None:
    history = [A("x"), {"role": "assistant", "name": "bob", "content": ""}, A("y")]
    once, report = repair_all(history)
    assert once == [A("x\ny")]
    assert [(r.kind, r.input) for r in report.records] == [("drop_empty_assistant", [1]), ("merge_assistant", [0, 2])]
    twice, again = repair_all(once)
    assert twice == once and again.records == []


def test_held_bytes_do_not_accumulate_across_released_users() -> None:
    history = []
    for _ in range(50):
        history += [U("x" * 10), U("y" * 10), S("s")]
    out, _ = repair_all(history, max_held_bytes=200)  # the pending message never exceeds ~40 characters
    assert out == [U("x" * 10 + "\n" + "y" * 10), S("s")] * 50


def test_a_second_result_for_the_last_call_is_a_duplicate() -> None:
    history = [A(None, ["a"]), T("a", "1"), T("a", "2")]
    out, report = repair_all(history)
    assert out == [A(None, ["a"]), T("a", "1")]
    assert kinds(report) == {"drop_duplicate_result": 1}


# ---------------------------------------------------------------- the sans-I/O surface, driven directly


def test_feed_returns_what_became_final_and_close_flushes_the_rest() -> None:
    core = Normalizer()
    assert core.feed(U("q")) == []  # held: the turn after it may yet turn out empty
    assert core.feed(A("Let me look.")) == []  # held: another fragment may follow
    assert core.feed(A(None, ["c1"])) == []  # merged into the held turn; it now waits for c1
    assert core.feed(T("c1", "r")) == [U("q"), A("Let me look.", ["c1"]), T("c1", "r")]
    assert core.state == "idle"
    assert core.feed(U("thanks")) == []
    assert core.close() == [U("thanks")]
    assert core.state == "closed" and core.close() == []  # idempotent once it succeeded
    assert (core.report.messages_in, core.report.messages_out) == (5, 4)
    assert kinds(core.report) == {"merge_assistant": 1}
    assert [(r.input, r.output) for r in core.report.records] == [([1, 2], 1)]


def test_a_user_deferred_behind_open_calls_is_replayed_after_the_tool_block() -> None:
    core = Normalizer()
    assert core.feed(A(None, ["c1", "c2"])) == []
    assert core.feed(U("meanwhile")) == []
    assert core.state == "tools"
    assert core.feed(T("c2", "two")) == []
    assert core.feed(T("c1", "one")) == [A(None, ["c1", "c2"]), T("c1", "one"), T("c2", "two")]
    assert core.state == "user"  # the deferred user, replayed and held
    assert core.close() == [U("meanwhile")]
    assert kinds(core.report) == {"move_result": 2, "reorder_results": 1}


def test_feed_after_close_and_after_an_error_is_refused() -> None:
    core = Normalizer()
    core.close()
    with pytest.raises(normalizer.UsageError, match=r"feed\(\) called after close\(\)"):
        core.feed(U())
    broken = Normalizer(orphan_results="error")
    with pytest.raises(normalizer.OrphanResultError):
        broken.feed(T("nobody"))
    with pytest.raises(normalizer.UsageError, match="raised an error"):
        broken.feed(U())


def test_an_invalid_message_skipped_leaves_the_core_usable() -> None:
    core = Normalizer(on_invalid="skip")
    assert core.feed({"role": "robot", "content": "beep"}) == []
    assert core.feed(U("q")) == [] and core.close() == [U("q")]
    (record,) = core.report.records
    assert (record.kind, record.input, record.dropped) == ("skip_invalid", [0], {"role": "robot", "content": "beep"})


def test_the_normalizer_has_no_instance_dict():
    # __slots__: with its ~50 attributes an instance dict would not share its keys, and every
    # attribute read and method lookup of the per-message path would take the slow path.
    # (A new attribute must be added to __slots__: assigning it raises AttributeError.)
    core = Normalizer("mistral")
    assert not hasattr(core, "__dict__")
    with pytest.raises(AttributeError):
        core.not_an_attribute = 1  # type: ignore[attr-defined]


def test_the_profile_encoder_and_stage_have_no_instance_dict():
    # The same for the two objects a shaping profile reads per message: at 28 and 25
    # attributes they sit just under the 30 keys an instance dict shares.
    core = Normalizer("mistral")
    stage = core._emit.__self__  # type: ignore[attr-defined]  # the stage's feed is the core's sink
    for obj in (core._encoder, stage):
        assert not hasattr(obj, "__dict__"), type(obj).__name__


@pytest.mark.parametrize(("indices", "text"), [
    ([4], "4"), ([4, 5, 6], "4-6"), ([4, 7, 9], "4, 7, 9"), ([5, 4], "5, 4"), ([3, 3], "3, 3"), ([0, 1], "0-1"),
])
def test_span_names_consecutive_inputs_as_a_range(indices: list[int], text: str) -> None:
    # How records name the inputs of a merge ("merged assistant messages 4-6").
    from normalizer._core._notes import span as _span

    assert _span(indices) == text


def test_each_merge_conflict_names_the_held_message_and_the_later_one() -> None:
    """A turn of many fragments whose every fragment conflicts: each record names two
    messages (the one held, the one merged in), so the records grow with the fragments,
    not with their square (the whole run so far was in every record: 10,000 fragments took
    37 s and 436 MB with --report, 0.4 s and 43 MB now)."""
    history = [U()] + [A(f"f{i}", meta={"n": i}) for i in range(5)]
    out, report = repair_all(history)
    assert out == [U(), A("f0\nf1\nf2\nf3\nf4", meta={"n": 4})]
    conflicts = [r for r in report.records if r.kind == "merge_conflict"]
    assert [(r.input, r.dropped) for r in conflicts] == [([1, i], {"meta": {"n": i - 2}}) for i in range(2, 6)]
    assert conflicts[-1].detail == ("message 5 merged into message 1: 'meta' was {'n': 3}, the later message's "
                                    "{'n': 4} kept")


def test_a_stub_names_the_fragment_that_made_its_call() -> None:
    """Per-call records of a merged turn name the one message that made the call, not every
    fragment of the turn: a turn of 5,000 one-call fragments left unanswered made 5,000
    records of 5,000 indices each (17 s and a 120 MB report; 0.26 s and 0.8 MB now)."""
    history = [U(), A(None, ["c0"]), A(None, ["c1"]), A(None, ["c2"]), T("c1")]
    out, report = repair_all(history)
    assert [m.get("tool_call_id") for m in out] == [None, None, "c0", "c1", "c2"]
    stubs = [(r.input, r.output, r.detail) for r in report.records if r.kind == "stub_missing_result"]
    assert stubs == [([1], 2, "call 'c0' had no result; added a stub result"),
                     ([3], 4, "call 'c2' had no result; added a stub result")]
    _, dropped = repair_all(history[:4], trailing_calls="drop")
    assert [(r.input, r.dropped["id"]) for r in dropped.records if r.kind == "drop_unanswered_call"] == [
        ([1], "c0"), ([2], "c1"), ([3], "c2")]


def test_a_moved_result_names_itself_and_the_first_message_it_now_precedes() -> None:
    history = [U(), A(None, ["c0", "c1"]), U("a"), U("b"), U("c"), T("c0"), T("c1")]
    out, report = repair_all(history)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool", "user"]
    moves = [(r.input, r.detail) for r in report.records if r.kind == "move_result"]
    assert moves == [
        ([5, 2], "moved result 5 up to its call, before 3 message(s) that arrived while it was outstanding"),
        ([6, 2], "moved result 6 up to its call, before 3 message(s) that arrived while it was outstanding"),
    ]


def test_the_stub_has_one_home() -> None:
    """Rewording the stub of an unanswered call touches normalizer/_stub.py only: its text,
    its records' sentences (the core's and the session editor's) and the session stub lines'
    shape are there, and no other package file spells them (issue 37)."""
    from pathlib import Path

    import normalizer
    from normalizer import _defaults, _stub

    assert _defaults.DEFAULT_STUB_TEXT is _stub.DEFAULT_STUB_TEXT
    words = [_stub.DEFAULT_STUB_TEXT, "added a stub result", "was not answered; a synthetic",
             '"type": "tool_result", "content": text', 'line["toolUseResult"]']
    root = Path(normalizer.__file__).parent
    for path in root.rglob("*.py"):
        if path.name == "_stub.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not [w for w in words if w in text], path
    n = Normalizer()
    n.feed({"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]})
    out = n.feed({"role": "user", "content": "next"}) + n.close()
    assert out[1] == _stub.chat_stub("c1", _stub.DEFAULT_STUB_TEXT)
    assert [r.detail for r in n.report.records if r.kind == _stub.STUB_KIND] == [_stub.stub_detail("c1")]


def test_a_held_result_keeps_its_input_index_and_notes_until_its_block_is_emitted() -> None:
    # The results of a block arrive out of order, one of them without an id: the reorder
    # record names each result's own input index in arrival order, and the id-less result's
    # note (made when it was held) is filed with the output it became, also under a profile
    # that rewrites the ids (the encoding path reads the held result's index and notes).
    history = [U(), A(None, ["c1", "c2", "c3"]), T("c3"), T(None, "x"), T("c2")]
    for profile in ("default", "anthropic"):
        out, report = repair_all(history, profile=profile)
        reorder = [r.input for r in report.records if r.kind == "reorder_results"]
        assert reorder == [[2, 3, 4]]
        assigned = [(r.input, r.output) for r in report.records if r.kind == "assign_result_id"]
        assert assigned == [([3], 2)]
        assert [m.get("content") for m in out[2:]] == ["x", "result", "result"]
