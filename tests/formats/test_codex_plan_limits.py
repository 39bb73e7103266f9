"""The Codex rollback plan is bounded: ``MAX_ROLLBACK_TURNS`` user turns and rolled-back
line ranges remembered together, the ``user_message`` event past it refused at its line.

Ranges are merged as they come (contained, overlapping, or apart only by the earlier
``thread_rolled_back`` line): rollback after rollback is one range, and what a rollout
reads as is what it read as when every range was kept and merged at the end.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from normalizer import LimitExceeded
from normalizer.formats import _codex, read_messages
from normalizer.formats._codex import MAX_ROLLBACK_TURNS, CodexPlanner, plan_codex
from normalizer._report import Report


def line(kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": "t", "type": kind, "payload": payload}) + b"\n"


def user(text: str) -> bytes:
    return line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def said(text: str) -> bytes:
    return line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})


def asked(text: str) -> bytes:
    return line("event_msg", {"type": "user_message", "message": text})


def rolled_back(n: int = 1) -> bytes:
    return line("event_msg", {"type": "thread_rolled_back", "num_turns": n})


META = line("session_meta", {"id": "x"})


def write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def test_the_limit_is_documented() -> None:
    assert MAX_ROLLBACK_TURNS == 1_000_000
    assert "`MAX_ROLLBACK_TURNS` (Codex rollback plan) | 1,000,000 |" in (
        Path(__file__).parents[2] / "docs" / "limits.md").read_text()


# -- the limit ------------------------------------------------------------------------------


def turns(n: int) -> list[bytes]:
    return [piece for i in range(n) for piece in (user(f"q{i}"), asked(f"q{i}"), said(f"a{i}"))]


def test_user_turns_past_the_limit_are_refused_at_their_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_codex, "MAX_ROLLBACK_TURNS", 3)
    at_limit = write(tmp_path, [META, *turns(3), rolled_back()])
    assert [m["content"] for m in read_messages(at_limit, "codex")] == ["q0", "a0", "q1", "a1"]
    past = write(tmp_path, [META, *turns(4), rolled_back()])
    with pytest.raises(LimitExceeded) as caught:
        list(read_messages(past, "codex"))
    err = caught.value
    assert (err.limit, err.value, err.source, err.line, err.index) == ("MAX_ROLLBACK_TURNS", 3, str(past), 12, None)
    assert str(err) == (
        f"{past}:12: more than 3 user turns and rolled-back line ranges would be remembered to apply "
        "this rollout's rollbacks (thread_rolled_back), each kept to the end of the file. "
        "No real rollout has this many; check that the file is one rollout, not several joined"
    )


def test_ranges_left_apart_count_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each turn asked, answered, rolled back, then a turn kept without its event: the ranges
    # are lines apart (not merged), and each stays remembered.
    monkeypatch.setattr(_codex, "MAX_ROLLBACK_TURNS", 3)

    def rollout(n: int) -> list[bytes]:
        return [META] + [piece for i in range(n) for piece in (
            user(f"q{i}"), asked(f"q{i}"), said(f"a{i}"), rolled_back(), user(f"k{i}"), said(f"ok{i}"))]

    planner = CodexPlanner(source="r.jsonl")
    planner.feed(b"".join(rollout(3)))
    assert len(planner.close().rolled_back) == 3
    planner = CodexPlanner(source="r.jsonl")
    with pytest.raises(LimitExceeded) as caught:
        planner.feed(b"".join(rollout(4)))
    assert (caught.value.source, caught.value.line) == ("r.jsonl", 21)  # the 4th turn's event
    assert str(caught.value).startswith("r.jsonl:21: more than 3 user turns and rolled-back line ranges")


def test_rollback_after_rollback_is_one_range_and_frees_its_turns() -> None:
    # The audit's shape: asked, answered, rolled back, again and again. Nothing grows.
    lines = [META] + [piece for i in range(1000) for piece in (user(f"q{i}"), asked(f"q{i}"), said(f"a{i}"), rolled_back())]
    planner = CodexPlanner()
    planner.feed(b"".join(lines))
    plan = planner.close()
    assert plan.rolled_back == [(2, 4001)]
    assert len(planner._turn_starts) == 0
    assert list(read_messages(io.BytesIO(b"".join([*lines, user("last"), said("kept")])), "codex")) == [
        {"role": "user", "content": "last"}, {"role": "assistant", "content": "kept"}]


def test_a_rollback_reaching_further_back_swallows_the_ranges_inside_it() -> None:
    lines = [META, *turns(3), rolled_back(1), user("x"), asked("x"), rolled_back(3)]
    # Turns start at lines 2, 5, 8; the first rollback (line 11) leaves out [8, 11); the
    # second, three turns (2, 5 and 12), leaves out [2, 14) which holds it.
    assert plan_codex(enumerate(lines, 1)).rolled_back == [(2, 14)]


# -- the same history as before -------------------------------------------------------------


class _Unmerged(CodexPlanner):
    """The planner as it was: every range kept, sorted and merged at the end."""

    def _roll_back(self, start: int, line: int) -> None:
        self._ranges.append((start, line))

    def result(self) -> _codex.CodexPlan:
        plan = self._plan
        plan.rolled_back = []
        for start, end in sorted(self._ranges):
            if plan.rolled_back and start <= plan.rolled_back[-1][1]:
                plan.rolled_back[-1] = (plan.rolled_back[-1][0], max(end, plan.rolled_back[-1][1]))
            else:
                plan.rolled_back.append((start, end))
        return plan


_PIECES = st.one_of(
    st.builds(lambda w, e, a: [user(w), *[asked(w)] * e, *[said(w.upper())] * a],
              st.sampled_from("abc"), st.booleans(), st.booleans()),
    st.builds(lambda w: [asked(w)], st.sampled_from(["a", "only here"])),
    st.builds(lambda n: [rolled_back(n)], st.one_of(st.integers(1, 4), st.sampled_from([0, -1, 9])))
    .map(lambda x: x),
    st.sampled_from([
        [line("event_msg", {"type": "turn_aborted"})],
        [line("response_item", {"type": "function_call", "name": "sh", "arguments": "{}", "call_id": "c"})],
        [line("compacted", {"message": "summary"})],
    ]),
)


def _read(src: bytes, planner: type[CodexPlanner], monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], str]:
    monkeypatch.setattr(_codex, "CodexPlanner", planner)
    import dataclasses

    from normalizer.formats import _registry
    monkeypatch.setitem(_registry.BY_NAME, "codex", dataclasses.replace(_registry.BY_NAME["codex"], planner=planner))
    report = Report()
    out = list(read_messages(io.BytesIO(src), "codex", report=report))
    return out, report.model_dump_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=20).map(lambda pieces: [META, *(x for piece in pieces for x in piece)]))
def test_a_rollout_reads_as_it_did(monkeypatch: pytest.MonkeyPatch, lines: list[bytes]) -> None:
    src = b"".join(lines)
    merged = plan_codex(enumerate(lines, 1))
    unmerged = _Unmerged()
    for number, raw in enumerate(lines, 1):
        unmerged.feed_line(number, raw)
    before = unmerged.result()
    items = [{"type": "message", "role": "user", "content": []}, {"type": "function_call"}]
    for number, raw in enumerate(lines, 1):
        if b"thread_rolled_back" in raw:
            continue  # the one line a merged range may newly cover: no item is asked about it
        for item in items:
            assert merged.keeps(number, item) == before.keeps(number, item), (number, merged, before)
    with monkeypatch.context() as mp:
        expected = _read(src, _Unmerged, mp)
    assert _read(src, CodexPlanner, monkeypatch) == expected
