"""Codex rollbacks and Anthropic (Cline) result pairing: linear work, the same decisions.

A rollout with R rollbacks checked every range for each item (R x items), and an Anthropic
turn of k calls answered one user message at a time worked out its open calls again for
each message (k x k). These tests pin that the faster code decides exactly as the
straightforward one did (kept here as the reference), on random small inputs, and that the
work per item no longer grows with R or k (counted, not timed). The bound on what an Anthropic
turn holds (``max_record_bytes``) changes nothing up to the most a turn holds, on the same inputs.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from functools import partial
from types import FrameType
from typing import Any, SupportsIndex

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from normalizer import InputError, Report
from normalizer.formats import AnthropicConverter, read_messages
from normalizer.formats import _anthropic, _blocks, _codex
from normalizer.formats._codex import CodexConverter, CodexPlan, plan_codex
from normalizer.formats._common import Turn, note_extra

# -- counting ------------------------------------------------------------------------------


class CountingList(list[Any]):
    """A list that counts the elements read from it (by index, slice or iteration)."""

    steps = 0

    def __getitem__(self, index: SupportsIndex | slice) -> Any:
        value = super().__getitem__(index)
        CountingList.steps += len(value) if isinstance(index, slice) else 1
        return value

    def __iter__(self) -> Iterator[Any]:
        for value in super().__iter__():
            CountingList.steps += 1
            yield value


# -- Codex: rollbacks ----------------------------------------------------------------------


def reference_keeps(plan: CodexPlan, line: int | None, item: Any) -> bool:
    """CodexPlan.keeps as it was: every rollback range checked."""
    if line is None:
        return True
    for start, end in plan.rolled_back:
        if start <= line < end:
            return False
    if plan.compaction_line is not None and line < plan.compaction_line:
        if plan.compaction_replaces:
            return False
        return isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"
    return True


def codex_line(kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": "t", "type": kind, "payload": payload}) + b"\n"


def user_item(text: str) -> bytes:
    return codex_line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def said_item(text: str) -> bytes:
    return codex_line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})


_WORDS = st.sampled_from(["a", "b", "c"])


def _turn(word: str, event: bool, answer: bool) -> list[bytes]:
    lines = [user_item(word)]
    if event:  # the event that starts the turn (what a rollback counts)
        lines.append(codex_line("event_msg", {"type": "user_message", "message": word}))
    return lines + [said_item(word.upper())] * answer


_ROLLBACK = st.one_of(st.integers(1, 3), st.integers(1, 3), st.sampled_from([0, -1, 9, "2", True])).map(
    lambda n: [codex_line("event_msg", {"type": "thread_rolled_back", "num_turns": n})])

_CODEX_PIECES = st.one_of(
    st.builds(_turn, _WORDS, st.booleans(), st.booleans()),
    _ROLLBACK,
    st.builds(_turn, _WORDS, st.just(True), st.booleans()),
    _ROLLBACK,
    st.sampled_from([
        [said_item("a")],
        [codex_line("event_msg", {"type": "user_message", "message": "only here"})],
        [codex_line("event_msg", {"type": "turn_aborted"})],
        [codex_line("response_item", {"type": "function_call", "name": "sh", "arguments": "{}", "call_id": "c"})],
        [codex_line("compacted", {"message": "summary"})],
        [codex_line("compacted", {"message": "s", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "r"}]}]})],
    ]),
)
_CODEX_LINES = st.lists(_CODEX_PIECES, max_size=16).map(lambda pieces: [line for piece in pieces for line in piece])

_ITEMS: list[Any] = [
    {"type": "message", "role": "user", "content": []},
    {"type": "message", "role": "assistant", "content": []},
    {"type": "function_call"},
    None,
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 60), unique=True), st.integers(-2, 62))
def test_in_ranges_is_the_linear_scan(bounds: list[int], line: int) -> None:
    bounds.sort()
    ranges = list(zip(bounds[::2], bounds[1::2]))  # sorted and disjoint, as the planner's
    assert _codex._in_ranges(ranges, line) == any(start <= line < end for start, end in ranges)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CODEX_LINES)
def test_codex_plan_keeps_as_the_reference(lines: list[bytes]) -> None:
    plan = plan_codex(enumerate(lines, 1))
    for line in [None, *range(len(lines) + 2)]:
        for item in _ITEMS:
            assert plan.keeps(line, item) == reference_keeps(plan, line, item), (line, item, plan)
    # And the whole conversion: the same messages and the same report.
    src = b"".join(lines)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CodexPlan, "keeps", reference_keeps)
        expected_report = Report()
        expected = list(read_messages(io.BytesIO(src), "codex", report=expected_report))
    report = Report()
    assert list(read_messages(io.BytesIO(src), "codex", report=report)) == expected
    assert report.model_dump_json() == expected_report.model_dump_json()


def rolled_back_rollout(turns: int) -> list[bytes]:
    """The sweep's codex_rollbacks shape: each turn asked, answered, rolled back, asked again."""
    lines: list[bytes] = []
    for i in range(turns):
        lines += [user_item(f"q{i}"), codex_line("event_msg", {"type": "user_message", "message": f"q{i}"}),
                  said_item(f"a{i}"), codex_line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
                  user_item(f"kept{i}"), said_item(f"ok{i}")]
    return lines


def codex_steps_per_item(turns: int) -> tuple[float, list[dict[str, Any]]]:
    """Rollback ranges read per CodexPlan.keeps call, and the messages."""
    lines = rolled_back_rollout(turns)
    plan = plan_codex(enumerate(lines, 1))
    assert len(plan.rolled_back) == turns
    plan.rolled_back = CountingList(plan.rolled_back)
    checks = 0
    keeps = plan.keeps

    def counted(line: int | None, item: Any) -> bool:
        nonlocal checks
        checks += 1
        return keeps(line, item)

    plan.keeps = counted  # type: ignore[method-assign]
    conv = CodexConverter(plan=plan)
    CountingList.steps = 0
    out = [m for i, raw in enumerate(lines, 1) for m in conv.feed(orjson.loads(raw), line=i)] + conv.close()
    assert checks >= 4 * turns  # each response_item, and the events of the rolled-back turns
    return CountingList.steps / checks, out


def test_codex_rollback_check_does_not_scan_every_range() -> None:
    small, out = codex_steps_per_item(16)
    large, _ = codex_steps_per_item(4096)
    assert [m["content"] for m in out[:4]] == ["kept0", "ok0", "kept1", "ok1"]
    # A binary search: about log2(R) + 1 ranges read per item, not R (R = 16, then 4096).
    assert small <= (16).bit_length() + 1
    assert large <= (4096).bit_length() + 1


# -- Anthropic: Cline's text results -------------------------------------------------------


class ReferenceConverter(AnthropicConverter):
    """AnthropicConverter with _pair_text_results as it was: the open calls worked out again
    from all the turn's calls and results for every user message."""

    def _pair_text_results(self, turn: Turn, content: list[Any], line: int | None) -> list[Any]:
        answered = {r.get("tool_call_id") for r in turn.results}
        answered |= {b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"}
        open_calls = [c for c in turn.calls if c.get("id") not in answered]
        if not open_calls:
            return content
        out: list[Any] = []
        i = 0
        while i < len(content):
            block = content[i]
            i += 1
            text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
            found = _anthropic._cline_result(text) if isinstance(text, str) else None
            call = next((c for c in open_calls if c["function"]["name"] == found.name), None) if found else None
            if found is None or call is None:
                out.append(block)
                continue
            name, header, rest = found.name, found.header, found.rest
            if rest is None:
                after = content[i] if i < len(content) else None
                taken = isinstance(after, dict) and after.get("type") in ("text", "image") and not (
                    after.get("type") == "text" and isinstance(after.get("text"), str) and _anthropic._cline_result(after["text"]))
                result: Any = [after] if taken else ""
                i += taken
            else:
                result = rest
            open_calls.remove(call)
            out.append({"type": "tool_result", "tool_use_id": call["id"], "content": result})
            note_extra(self.report, "pair_text_result", f"user text {header!r} answers call {call['id']!r} "
                       f"({name}, Cline's text result): it became that call's tool message", line=line,
                       dropped={"text": header} if header else None)
        return out


_NAMES = st.sampled_from(["read_file", "write"])
# Ids repeat (a result for an id answers every call of it); None: no id at all (rare).
_IDS = st.sampled_from(["a", "b", "c", "d", "e", "a", "b", None])


def _tool_use(name: str, call_id: str | None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": {}}
    if call_id is not None:
        block["id"] = call_id
    return block


def _tool_result(call_id: Any) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "content": "r"}
    if call_id is not None:
        block["tool_use_id"] = call_id
    return block


_CLINE_TEXTS = st.one_of(
    _NAMES.map(lambda n: {"type": "text", "text": f"[{n}] Result:"}),  # the result is the next block
    _NAMES.map(lambda n: {"type": "text", "text": f"[{n} for 'p.py'] Result:\nbody of {n}"}),
    _NAMES.map(lambda n: {"type": "text", "text": f"Tool [{n}] was not executed because the user said no."}),
)

# Cline's texts weigh most: most messages should pair something.
_USER_BLOCKS = st.one_of(
    _CLINE_TEXTS,
    st.sampled_from(["a", "b", "c", "d", "e", "a", "b", "zz", None, 5]).map(_tool_result),  # zz, 5: no call's
    _CLINE_TEXTS,
    st.sampled_from([{"type": "text", "text": "more"},
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]),
    _CLINE_TEXTS,
)

_ASSISTANT = st.lists(st.one_of(
    st.builds(_tool_use, _NAMES, _IDS),
    st.just({"type": "text", "text": "thinking aloud"}),
    st.builds(_tool_use, _NAMES, _IDS),
    # A server tool's result comes in the assistant message: it answers its id's calls at once.
    st.sampled_from(["a", "b"]).map(lambda i: {"type": "web_search_tool_result", "tool_use_id": i, "content": "found"}),
), min_size=1, max_size=6).map(lambda blocks: {"role": "assistant", "content": blocks})
_USER = st.lists(_USER_BLOCKS, min_size=1, max_size=5).map(lambda blocks: {"role": "user", "content": blocks})
_END = st.sampled_from([{"role": "user", "content": "a plain text turn"}, {"role": "system", "content": "be brief"}])
_ENDS: st.SearchStrategy[list[dict[str, Any]]] = st.one_of(st.just([]), _END.map(lambda m: [m]))
# Turns: an assistant message, the user messages that answer it, and sometimes a message
# that ends the turn (plain user text, system).
_TURN = st.tuples(_ASSISTANT, st.lists(_USER, max_size=4), _ENDS).map(lambda t: [t[0], *t[1], *t[2]])
_RECORDS = st.lists(_TURN, min_size=1, max_size=4).map(lambda turns: [m for turn in turns for m in turn])


def feed_each(conv: AnthropicConverter, records: list[Any]) -> list[Any]:
    """Every record's messages, or its error (the converter goes on after one, as with
    on_invalid="skip")."""
    out: list[Any] = []
    for line, record in enumerate(records, 1):
        try:
            out.append(conv.feed(record, line=line))
        except InputError as exc:
            out.append(("error", str(exc)))
    return [*out, conv.close()]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_RECORDS, st.lists(st.one_of(_ASSISTANT, _USER, _END), max_size=8)))  # turns, or any order
def test_anthropic_pairing_as_the_reference(records: list[dict[str, Any]]) -> None:
    expected_report, report = Report(), Report()
    expected = feed_each(ReferenceConverter(expected_report), records)
    assert feed_each(AnthropicConverter(report), records) == expected
    assert report.model_dump_json() == expected_report.model_dump_json()


def held_peak(records: list[dict[str, Any]]) -> int:
    """The most an unbounded converter's pending turn held at the end of any message."""
    conv = AnthropicConverter(Report())
    peak = 0
    for record in records:
        try:
            conv.feed(record)
        except InputError:
            pass
        peak = max(peak, conv._held)
    return peak


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_RECORDS, st.lists(st.one_of(_ASSISTANT, _USER, _END), max_size=8)))
def test_anthropic_limit_refuses_only_past_what_the_turn_holds(records: list[dict[str, Any]]) -> None:
    # At the most any turn holds, everything reads as without a limit (messages and report);
    # one byte under it, a message is refused, and every message before it reads the same.
    peak = held_peak(records)
    expected_report, report = Report(), Report()
    expected = feed_each(AnthropicConverter(expected_report), records)
    assert feed_each(AnthropicConverter(report, max_record_bytes=peak), records) == expected
    assert report.model_dump_json() == expected_report.model_dump_json()
    if peak:
        out = feed_each(AnthropicConverter(Report(), max_record_bytes=peak - 1), records)
        refused = [i for i, o in enumerate(out) if isinstance(o, tuple) and "max_record_bytes" in o[1]]
        assert refused and out[:refused[0]] == expected[:refused[0]]
        assert f"would hold more than {peak - 1} bytes of JSON" in out[refused[0]][1]


def test_anthropic_a_list_tool_use_id_is_reported_not_a_crash() -> None:
    # The old code put every id in a set first: a list id raised TypeError (unhashable).
    conv = AnthropicConverter(Report())
    conv.feed({"role": "assistant", "content": [_tool_use("ls", "a")]}, line=1)
    with pytest.raises(InputError, match="tool_use_id"):
        conv.feed({"role": "user", "content": [_tool_result(["a"])]}, line=2)


class CountingTurn(Turn):
    __slots__ = ()

    def __init__(self, key: Any = None) -> None:
        super().__init__(key)
        self.calls = CountingList()
        self.results = CountingList()


def one_turn_answered_one_by_one(k: int, *, cline: bool) -> list[dict[str, Any]]:
    """The sweep's shapes: one assistant with k calls, then k user messages, each answering
    one call, by a tool_result block or by Cline's text."""
    records: list[dict[str, Any]] = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [_tool_use("read_file", f"t{i}") for i in range(k)]}]
    for i in range(k):
        block = {"type": "text", "text": f"[read_file for 'a{i}.py'] Result:\n{i}"} if cline else _tool_result(f"t{i}")
        records.append({"role": "user", "content": [block]})
    return records


@pytest.mark.parametrize("cline", [False, True], ids=["tool_result", "cline_text"])
def test_anthropic_each_answer_reads_no_more_of_the_turn_as_it_grows(monkeypatch: pytest.MonkeyPatch, cline: bool) -> None:
    monkeypatch.setattr(_blocks, "Turn", CountingTurn)
    for k in (20, 1000):
        records = one_turn_answered_one_by_one(k, cline=cline)
        conv = AnthropicConverter(Report())
        conv.feed(records[0], line=1)
        conv.feed(records[1], line=2)
        steps: list[int] = []
        for line, record in enumerate(records[2:], 3):
            CountingList.steps = 0
            assert conv.feed(record, line=line) == []  # held with the turn
            steps.append(CountingList.steps)
        out = conv.close()
        assert [m["tool_call_id"] for m in out[1:]] == [f"t{i}" for i in range(k)]
        assert [m["content"] for m in out[1:3]] == (["0", "1"] if cline else ["r", "r"])
        # The first answer takes in the turn's k calls; each later one its own result only
        # (the old code read all k calls and every result so far, for every message).
        assert steps[0] <= k + 1
        assert max(steps[1:]) <= 1


def _python_lines(run: Callable[[], object]) -> int:
    """Lines of the formats package's Python run by ``run()`` (each loop step counts)."""
    lines = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        if "normalizer/formats/" not in frame.f_code.co_filename.replace("\\", "/"):
            return None
        if event == "line":
            lines += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        run()
    finally:
        sys.settrace(previous)
    return lines


@pytest.mark.parametrize("cline", [False, True], ids=["tool_result", "cline_text"])
def test_anthropic_work_per_answer_does_not_grow_with_open_calls(cline: bool) -> None:
    worst: list[int] = []
    for k in (20, 400):
        records = one_turn_answered_one_by_one(k, cline=cline)
        conv = AnthropicConverter(Report())
        conv.feed(records[0], line=1)
        conv.feed(records[1], line=2)
        conv.feed(records[2], line=3)  # the first answer takes in the turn's calls
        worst.append(max(_python_lines(partial(conv.feed, record, line=line)) for line, record in enumerate(records[3:], 4)))
    assert worst[1] == worst[0], worst
