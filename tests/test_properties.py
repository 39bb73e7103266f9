"""Property tests over generated defective histories: the rules hold, repair is a fixed
point, nothing is lost, and every adapter and chunking gives the same output."""

from __future__ import annotations

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normalizer
from normalizer import Normalizer

from helpers import assert_nothing_lost, assert_pairing_rules, call, repair_all

IDS = ["c1", "c2", "c3", "c4"]
texts = st.sampled_from(["", " ", "hello", "Let me check.", "done", "a\nb", "Ünïcode ✓"])
contents = st.one_of(
    texts,
    st.none(),
    st.just([]),
    st.just([{"type": "text", "text": ""}]),
    st.just([{"type": "text", "text": "part"}]),
    st.just([{"type": "image_url", "image_url": {"url": "data:,x"}}]),
)
names = st.one_of(st.none(), st.sampled_from(["alice", "bob"]))


@st.composite
def assistants(draw):
    message = {"role": "assistant", "content": draw(contents)}
    n_calls = draw(st.integers(0, 3))
    if n_calls or draw(st.booleans()):
        ids = draw(st.lists(st.sampled_from(IDS), min_size=n_calls, max_size=n_calls))
        message["tool_calls"] = [
            call(i, draw(st.sampled_from(["read", "write"])), draw(st.sampled_from(["{}", '{"a":1}', "", None])))
            for i in ids
        ]
    if draw(st.integers(0, 4)) == 0:
        message["reasoning_content"] = draw(texts)
    if draw(st.integers(0, 6)) == 0:
        message["name"] = draw(names)
    if draw(st.integers(0, 15)) == 0:
        message["finish_reason"] = "incomplete"
    return message


# Reasoning-only messages of a named speaker, between fragments of another's turn (attack 14).
thinking = st.builds(
    lambda n, c: {"role": "assistant", "content": c, "reasoning_content": "R"} | ({"name": n} if n else {}),
    names, st.sampled_from([None, ""]),
)
users = st.builds(lambda c, n: {"role": "user", "content": c} | ({"name": n} if n else {}), contents, names)
systems = st.builds(lambda c: {"role": "system", "content": c}, texts)
tools = st.builds(
    lambda i, c: {"role": "tool", "tool_call_id": i, "content": c},
    st.one_of(st.sampled_from(IDS + ["zz"]), st.just(None)),
    st.sampled_from(["ok", "", "output 1", "error: boom"]),
)
histories = st.lists(
    st.one_of(assistants(), assistants(), thinking, users, tools, tools, systems), max_size=30
)
policies = st.fixed_dictionaries({
    "orphan_results": st.sampled_from(["drop", "keep_as_user"]),
    "trailing_calls": st.sampled_from(["stub", "drop"]),
})

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(histories, policies)
def test_output_obeys_the_rules(history, options):
    out, _ = repair_all(history, **options)
    assert_pairing_rules(out)


@SETTINGS
@given(histories, policies)
def test_repair_is_idempotent(history, options):
    once, _ = repair_all(history, **options)
    twice, report = repair_all(once, **options)
    assert twice == once
    assert report.counts == {}, report.records


@SETTINGS
@given(histories, policies)
def test_nothing_is_lost(history, options):
    out, report = repair_all(history, **options)
    assert_nothing_lost(history, out, report)


@SETTINGS
@given(histories)
def test_trailing_keep_leaves_only_the_last_turn_open(history):
    out, _ = repair_all(history, trailing_calls="keep")
    assert_pairing_rules(out, trailing_calls="keep")


@SETTINGS
@given(histories)
def test_records_point_at_real_output_indices(history):
    out, report = repair_all(history)
    for record in report.records:
        if record.output is not None:
            assert 0 <= record.output < len(out)
        assert all(0 <= i < len(history) for i in record.input)


@SETTINGS
@given(histories, st.lists(st.integers(1, 5), min_size=1, max_size=10))
def test_every_chunking_and_adapter_gives_the_same_output(history, chunk_sizes):
    expected, _ = repair_all(history)

    # The core fed in uneven chunks, outputs collected per call.
    core = Normalizer()
    got = []
    position = 0
    sizes = iter(chunk_sizes * (len(history) + 1))
    while position < len(history):
        size = next(sizes)
        for message in history[position : position + size]:
            got.extend(core.feed(message))
        position += size
    got.extend(core.close())
    assert got == expected

    # The async adapter, from an async generator and from a plain list.
    async def collect(source):
        return [m async for m in normalizer.arepair(source)]

    async def agen():
        for message in history:
            yield message

    assert anyio.run(collect, agen()) == expected
    assert anyio.run(collect, history) == expected
    assert list(normalizer.repair(iter(history), validate=False)) == expected
