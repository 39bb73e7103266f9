"""The writers: in-memory values orjson cannot write are a positioned InvalidMessage, never a
TypeError; fine-tuning lines are written as they come, the same bytes as one dumps."""

from __future__ import annotations

import io
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalizer import InvalidMessage, write_json_array, write_jsonl
from normalizer.formats._finetune import FinetuneWriter
from normalizer.formats._writing import encode_conversation
from normalizer.formats._writers import awrite_jsonl

GOOD = {"role": "user", "content": "hi"}
SURROGATE = {"role": "user", "content": "a\ud800b"}


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("bad", [SURROGATE, {"role": "user", "content": "x", "v": nested(300)}], ids=["surrogate", "deep"])
@pytest.mark.parametrize("write", [write_jsonl, write_json_array])
def test_an_unwritable_message_names_its_index(write: Any, bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidMessage) as exc:
        write([GOOD, GOOD, bad], io.BytesIO())
    assert exc.value.index == 2
    assert str(exc.value).startswith("message 2: cannot be written as JSON (")


def test_the_async_writer_names_it_too() -> None:
    async def go() -> None:
        await awrite_jsonl([GOOD, SURROGATE], io.BytesIO())

    with pytest.raises(InvalidMessage) as exc:
        anyio.run(go)
    assert exc.value.index == 1


# -- fine-tuning JSONL, written as it comes ------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_OBJECT = st.dictionaries(st.text(max_size=6), _JSON, max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(_OBJECT, max_size=5), _OBJECT), max_size=3))
def test_finetune_lines_are_one_dumps_of_each_record(conversations: list[tuple[list[Any], dict[str, Any]]]) -> None:
    """Streamed, a fine-tuning line is byte for byte orjson.dumps of the whole record
    ({"messages": [...], **extra}, a "messages" key in extra left out)."""
    encoder = FinetuneWriter()
    out = encoder.start()
    for messages, extra in conversations:
        out += encoder.begin(extra)
        for m in messages:
            out += encoder.message(m)
        out += encoder.end()
    out += encoder.finish()
    assert out == b"".join(encode_conversation(messages, extra) for messages, extra in conversations)


class _Weak(dict):  # type: ignore[type-arg]
    """A message a weak reference can follow."""


def test_finetune_holds_no_message_of_the_conversation() -> None:
    """A conversation of any length converts in bounded memory: each message is written as
    it comes and let go (the encoder used to hold the conversation until its end)."""
    import gc
    import weakref

    encoder = FinetuneWriter()
    head = encoder.begin({"id": 7})
    refs = []
    parts = [head]
    for i in range(3):
        m = _Weak(role="user", content=f"m{i}")
        parts.append(encoder.message(m))
        refs.append(weakref.ref(m))
        del m
    gc.collect()
    assert [ref() for ref in refs] == [None, None, None]
    parts.append(encoder.end())
    assert b"".join(parts) == (b'{"messages":[{"role":"user","content":"m0"},{"role":"user","content":"m1"},'
                               b'{"role":"user","content":"m2"}],"id":7}\n')


def test_an_unwritable_message_in_a_finetune_line_names_its_conversation() -> None:
    from normalizer.formats import write_finetune

    with pytest.raises(InvalidMessage) as exc:
        write_finetune([([GOOD], {}), ([GOOD, SURROGATE], {})], io.BytesIO())
    assert exc.value.index == 1  # the conversation (as when the line was written whole)
