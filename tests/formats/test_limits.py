"""Hostile nesting, over-large document records and lone surrogates: refused where they are
read, with the file position (regressions of the attack campaign, items 3, 4, 10 and 13)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from normalizer import InvalidMessage, LimitExceeded, Report
from normalizer.formats._document import DocReader
from normalizer.formats._records import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_RECORD_BYTES,
    Meta,
    Position,
    Record,
    nesting_at,
    position_of,
)
from normalizer.formats import aread_messages, read_messages
from normalizer._depth import deeper_than

ROOT = Path(__file__).parents[2]
USER = b'{"role":"user","content":"hi"}'
SURROGATE_WHAT = "lone surrogate \\ud800 in a string (half of a UTF-16 pair: not a character)"


def read(data: bytes, **kwargs: Any) -> list[dict[str, Any]]:
    return list(read_messages(io.BytesIO(data), **kwargs))


def feed_in_pieces(data: bytes, size: int, **kwargs: Any) -> list[Record | Meta]:
    """A DocReader fed ``size`` bytes at a time: every kind of piece boundary gets crossed."""
    doc = DocReader("doc.json", **kwargs)
    out: list[Record | Meta] = []
    for start in range(0, len(data), size):
        out += doc.feed(data[start : start + size])
    return out + doc.close()


def run_capped(code: str, cap_bytes: int = 1 << 30) -> subprocess.CompletedProcess[str]:
    """``code`` in a child whose address space is capped: a blow-up fails the test with a
    MemoryError there instead of taking the machine down."""
    prelude = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({cap_bytes}, {cap_bytes}))\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env, timeout=120)


# -- item 3: a JSON document nested 200,000 deep ------------------------------------------------


def test_a_document_nested_200000_deep_is_refused_in_bounded_memory() -> None:
    # was: ijson's prefixed events grew with depth squared: 22 GB, then an OOM kill
    code = """
import io
from normalizer import LimitExceeded
from normalizer.formats import read_messages
try:
    list(read_messages(io.BytesIO(b"[" * 200_000 + b"]" * 200_000)))
except LimitExceeded as exc:
    print(exc.limit, exc.value, exc.line, exc.column)
    print(exc)
# VmHWM, not ru_maxrss: Linux carries the forking parent's (pytest's) RSS into ru_maxrss
print(next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024)
"""
    done = run_capped(code)
    assert done.returncode == 0, done.stderr
    limit, error, peak_mb = done.stdout.splitlines()
    assert limit == "max_depth 128 1 129"
    assert error == (
        "<stream>:1:129: nested deeper than 128 levels. "
        "A chat message is about 10 levels deep; raise max_depth if this data is genuine"
    )
    assert int(peak_mb) < 300


def test_document_depth_is_counted_from_the_outermost_bracket(tmp_path: Path) -> None:
    # 126 levels inside a message inside the array: 128 in all, accepted; one more is not.
    def doc(levels: int) -> bytes:
        return b'[{"role":"user","content":"x","v":' + b"[" * levels + b"]" * levels + b"}]"

    assert read(doc(126)) == [{"role": "user", "content": "x", "v": orjson.loads(b"[" * 126 + b"]" * 126)}]
    with pytest.raises(LimitExceeded) as exc:
        read(doc(127))
    assert (exc.value.line, exc.value.column) == (1, 35 + 127 - 1)
    assert len(read(doc(127), max_depth=129)) == 1


@pytest.mark.parametrize("size", [1, 2, 5, 7, 64 * 1024, 1 << 20])
def test_document_depth_error_names_line_and_column_whatever_the_pieces(size: int) -> None:
    # Strings full of brackets, escaped quotes and backslashes before the deep value, fed in
    # pieces that cut strings and escapes everywhere: the position is still exact.
    filler = b' {"role":"user","content":"[[ {{ \\" \\\\ \\\\\\" ]] \xc3\xa9 \\"[["},\n'
    lead = b' {"role":"user","content":"x \\\\","v":'
    data = b"[\n" + filler * 3000 + lead + b"[" * 300 + b"]" * 300 + b"}\n]"
    with pytest.raises(LimitExceeded) as exc:
        feed_in_pieces(data, size)
    # The array is level 1, the message level 2: the 127th "[" of "v" opens level 129.
    assert (exc.value.source, exc.value.line, exc.value.column) == ("doc.json", 3002, len(lead) + 127)
    assert (exc.value.limit, exc.value.value) == ("max_depth", DEFAULT_MAX_DEPTH)


# -- item 10: a JSONL line nested 300 deep ---------------------------------------------------


def test_a_jsonl_line_nested_300_deep_is_refused_at_read_time(tmp_path: Path) -> None:
    # was: orjson read it (its limit is 1024) but cannot write past 255: TypeError at the writer
    lead = b'{"role":"user","content":"[[[","v":'
    path = tmp_path / "deep.jsonl"
    path.write_bytes(USER + b"\n" + lead + b"[" * 300 + b"]" * 300 + b"}\n")
    with pytest.raises(LimitExceeded) as exc:
        list(read_messages(path))
    assert (exc.value.line, exc.value.column) == (2, len(lead) + 128)
    assert str(exc.value) == (
        f"{path}:2:{len(lead) + 128}: nested deeper than 128 levels. "
        "A chat message is about 10 levels deep; raise max_depth if this data is genuine"
    )
    assert len(list(read_messages(path, max_depth=301))) == 2


def test_a_jsonl_line_past_orjsons_own_depth_limit_gets_the_same_error() -> None:
    with pytest.raises(LimitExceeded) as exc:
        read(b'{"a":' * 2000 + b"1" + b"}" * 2000 + b"\n")
    assert (exc.value.limit, exc.value.line, exc.value.column) == ("max_depth", 1, 5 * 128 + 1)


def test_a_line_with_many_brackets_in_strings_is_not_too_deep() -> None:
    line = orjson.dumps({"role": "user", "content": "[{" * 500, "v": [[[1]]]})
    assert read(line + b"\n") == [{"role": "user", "content": "[{" * 500, "v": [[[1]]]}]


def test_a_conversation_line_is_cleared_by_its_bracket_count_and_walked_past_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fine-tuning line is a whole conversation: its brackets are counted first (a count of
    # max_depth or less cannot nest deeper), and the value is walked only past that count.
    from normalizer.formats import _reader, read_conversations

    walked: list[int] = []

    def counted(value: Any, max_depth: int) -> bool:
        walked.append(max_depth)
        return deeper_than(value, max_depth)

    monkeypatch.setattr(_reader, "deeper_than", counted)
    plain = orjson.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}] * 30})
    assert plain.count(b"[") + plain.count(b"{") <= DEFAULT_MAX_DEPTH < len(plain) // 2
    brackets = orjson.dumps({"messages": [{"role": "user", "content": "[{" * 200}, {"role": "assistant", "content": "k"}]})
    lead = b'{"messages":[{"role":"user","content":"x","v":'
    deep = lead + b"[" * 200 + b"]" * 200 + b"}]}"
    convs = read_conversations(io.BytesIO(plain + b"\n" + brackets + b"\n"), "finetune")
    assert [len(c.messages if isinstance(c.messages, list) else list(c.messages)) for c in convs] == [60, 2]
    # The plain line cleared by its count; the one with brackets in its strings walked. (In
    # the compiled build the reader calls deeper_than natively, past the patch: only the
    # results above and below can be seen there.)
    if not _reader.__file__.endswith((".so", ".pyd")):
        assert walked == [DEFAULT_MAX_DEPTH]
    with pytest.raises(LimitExceeded) as exc:
        list(read_conversations(io.BytesIO(plain + b"\n" + deep + b"\n"), "finetune"))
    # the line of the deep value, and the column of its bracket that opens level 129 (the
    # record is level 1, messages 2, the message 3: "v" holds levels 4 on)
    assert (exc.value.limit, exc.value.line, exc.value.column) == ("max_depth", 2, len(lead) + 126)


# -- the JSONL depth check walks the parsed value -------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.integers(min_value=-9, max_value=9) | st.text(alphabet="[]{}a\"\\", max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="ab[{", max_size=2), inner, max_size=3),
    max_leaves=40,
)


@given(JSON_VALUES, st.integers(min_value=0, max_value=8))
def test_deeper_than_agrees_with_the_bracket_tokenizer(value: Any, max_depth: int) -> None:
    assert deeper_than(value, max_depth) == (nesting_at(orjson.dumps(value), max_depth) is not None)


@given(st.dictionaries(st.text(alphabet="ab", max_size=2), JSON_VALUES, max_size=4), st.integers(min_value=4, max_value=9))
def test_deeper_than_agrees_past_its_unrolled_levels(value: dict[str, Any], max_depth: int) -> None:
    # An object whose levels straddle the four looked through as nested loops.
    deep = {"x": value, "y": [[value]]}
    for v in (value, deep):
        assert deeper_than(v, max_depth) == (nesting_at(orjson.dumps(v), max_depth) is not None)


@pytest.mark.parametrize("max_depth", [5, 6, 7, 12])
def test_deeper_than_at_every_level_around_the_unrolled_ones(max_depth: int) -> None:
    for depth in range(1, max_depth + 3):
        nested: Any = "leaf"
        for level in range(depth):
            nested = {"k": nested} if level % 2 else [nested]
        value = {"role": "user", "content": nested}  # depth + 1 levels
        assert deeper_than(value, max_depth) == (depth + 1 > max_depth), depth


def test_deeper_than_counts_levels_of_arrays_and_objects() -> None:
    values: list[Any] = ["[[", 7, None, {}, []]
    assert [deeper_than(v, 0) for v in values] == [False, False, False, True, True]
    assert (deeper_than({"a": [{}]}, 2), deeper_than({"a": [{}]}, 3)) == (True, False)
    wide = {"a": [1] * 1000, "b": [[2]] * 1000, "c": {"d": "x" * 10_000}}
    assert (deeper_than(wide, 2), deeper_than(wide, 3)) == (True, False)


@pytest.mark.parametrize("max_depth", [2, 3, 40, DEFAULT_MAX_DEPTH])
def test_a_long_line_is_refused_one_level_past_max_depth_and_not_at_it(max_depth: int) -> None:
    # Long enough to be looked at (more than 2 * max_depth bytes); the nesting sits in a
    # wide value, after a string full of brackets that count for nothing.
    lead = b'{"role":"user","content":"' + b"[{" * 300 + b'","v":[1,2,3],"w":'
    at_limit = lead + b"[" * (max_depth - 1) + b"0" + b"]" * (max_depth - 1) + b"}"
    past_limit = lead + b"[" * max_depth + b"0" + b"]" * max_depth + b"}"
    assert read(at_limit + b"\n", max_depth=max_depth) == [orjson.loads(at_limit)]
    with pytest.raises(LimitExceeded) as exc:
        read(USER + b"\n" + past_limit + b"\n", max_depth=max_depth)
    assert (exc.value.limit, exc.value.value, exc.value.line, exc.value.column) == ("max_depth", max_depth, 2, len(lead) + max_depth)


def test_max_depth_zero_refuses_every_object_line() -> None:
    with pytest.raises(LimitExceeded) as exc:
        read(USER + b"\n", max_depth=0)
    assert (exc.value.line, exc.value.column) == (1, 1)


def test_a_deep_value_the_parser_drops_for_a_duplicate_key_is_not_refused() -> None:
    # orjson keeps a repeated key's last value: the deep one was never read, so nothing
    # nests too deep in what the repair and the writer see.
    line = b'{"role":"user","content":"hi","v":' + b"[" * 200 + b"]" * 200 + b',"v":1}'
    assert read(line + b"\n") == [{"role": "user", "content": "hi", "v": 1}]


def test_a_too_deep_line_is_skipped_with_on_invalid_skip() -> None:
    deep = b'{"role":"user","v":' + b"[" * 200 + b"]" * 200 + b"}"
    report = Report()
    assert read(USER + b"\n" + deep + b"\n", format="chat", on_invalid="skip", report=report) == [orjson.loads(USER)]
    assert [(r.kind, r.line, r.dropped) for r in report.records] == [("skip_invalid", 2, deep.decode())]
    report.model_dump_json()  # what was dropped is kept as text, which dumps


@pytest.mark.parametrize("command", [("repair",), ("repair", "--report", "REPORT"), ("explain",)])
def test_the_command_line_refuses_a_deep_line_without_a_traceback(tmp_path: Path, command: tuple[str, ...]) -> None:
    # was: repair TypeError: Recursion limit reached; --report ValueError; explain TypeError
    path = tmp_path / "deep.jsonl"
    path.write_bytes(USER + b"\n" + b'{"role":"assistant","content":' + b"[" * 300 + b"]" * 300 + b"}\n")
    args = [a.replace("REPORT", str(tmp_path / "r.jsonl")) for a in command]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    done = subprocess.run([sys.executable, "-m", "normalizer", *args, str(path)], capture_output=True, env=env, timeout=60)
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr
    assert f"{path}:2:158: nested deeper than 128 levels".encode() in done.stderr


# -- item 4: a document record of 200 MB on one line -----------------------------------------


def test_an_over_large_document_record_is_refused_before_it_is_read_whole() -> None:
    # was: no per-record limit in documents: a 200 MB one-line array peaked at 651 MB
    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, n: int | None = -1) -> bytes:
            data = super().read(n)
            Counting.read_bytes += len(data)
            return data

    data = b'[{"role":"user","content":"' + b"x" * 10_000_000 + b'"}]'
    with pytest.raises(LimitExceeded) as exc:
        list(read_messages(Counting(data), max_record_bytes=1_000_000))
    assert (exc.value.limit, exc.value.value, exc.value.line, exc.value.column) == ("max_record_bytes", 1_000_000, 1, 4 * 256 * 1024 + 1)
    assert str(exc.value) == (
        "<stream>:1:1048577: record 0 of the JSON document is larger than 1000000 bytes. "
        "Raise max_record_bytes if the record is genuine (or convert the file to JSONL)"
    )
    assert Counting.read_bytes < 2_000_000
    assert DEFAULT_MAX_RECORD_BYTES == 64 * 1024 * 1024


def test_the_record_limit_is_per_record_not_per_document() -> None:
    one = b'{"role":"user","content":"' + b"y" * 200 + b'"},'
    data = b"[" + one * 20_000 + USER + b"]"  # 4.6 MB on one line, records of 230 bytes
    assert len(read(data, max_record_bytes=1_000_000)) == 20_001


def test_an_over_large_top_level_value_names_its_key() -> None:
    data = b'{\n "tools": ["' + b"t" * 3_000_000 + b'"],\n "messages": [' + USER + b"]}"  # a document
    with pytest.raises(LimitExceeded, match=r"^<stream>:2:\d+: the value of 'tools' of the JSON document is larger than 1000000 bytes"):
        read(data, max_record_bytes=1_000_000)


# -- item 13: lone surrogates, one policy: refused where read ------------------------------------


@pytest.mark.parametrize(
    "data, column",
    [
        (b'[{"role":"user","content":"a\\ud800b"}]', 29),
        (b'[{"role":"user","content":"a\\ud800"}]', 29),  # at the end of the string
        (b'[{"role":"user","content":"\xc3\xa9\\ud800\\u0041"}]', 29),  # a non-pair after it
        (b'[{"role":"user","content":"ok","k\\ud800":1}]', 34),  # in a key
        (b'[\n  {"role":"user",\n   "content":"\\\\\\ud800"}]', 17),  # after an escaped backslash
    ],
)
def test_a_lone_surrogate_in_a_document_is_refused_where_it_is(data: bytes, column: int) -> None:
    # was: ijson's C backend turned it into "?" without a word, while JSONL refused it
    line = data[: data.index(b"\\ud8")].count(b"\n") + 1
    for size in (1, 3, 11, 12, 13, 256 * 1024):
        with pytest.raises(InvalidMessage) as exc:
            feed_in_pieces(data, size)
        assert (exc.value.what, exc.value.line, exc.value.column) == (SURROGATE_WHAT, line, column), size


def test_a_lone_low_surrogate_in_a_document_is_refused_too() -> None:
    with pytest.raises(InvalidMessage) as exc:
        read(b'[{"role":"user","content":"a\\udc00b"}]')
    assert (exc.value.what, exc.value.line, exc.value.column) == (SURROGATE_WHAT.replace("d800", "dc00"), 1, 29)


@pytest.mark.parametrize(
    "text, expected",
    [
        (b"a\\ud83d\\ude00b", "a\U0001f600b"),  # an escaped pair (json.dumps's emoji)
        (b"a\\uD83D\\uDE00b", "a\U0001f600b"),
        (b"a\\\\ud800b", "a\\ud800b"),  # an escaped backslash, then text
        (b"\\\\\\\\ud800", "\\\\ud800"),
    ],
)
def test_surrogate_pairs_and_escaped_backslashes_read_whatever_the_pieces(text: bytes, expected: str) -> None:
    data = b'[{"role":"user","content":"' + text + b'"}]'
    for size in (1, 2, 5, 6, 7, 11, 12, 13, 256 * 1024):
        records = feed_in_pieces(data, size)
        assert [(r.value, r.number, position_of(r.place)) for r in records if isinstance(r, Record)] == [
            ({"role": "user", "content": expected}, 0, Position(1, 2))
        ], size


def test_jsonl_and_documents_word_a_lone_surrogate_alike(tmp_path: Path) -> None:
    with pytest.raises(InvalidMessage) as jsonl:
        read(b'{"role":"user","content":"\xc3\xa9\\ud800b"}\n')
    with pytest.raises(InvalidMessage) as doc:
        read(b'[{"role":"user","content":"\xc3\xa9\\ud800b"}]')
    assert (jsonl.value.what, jsonl.value.line, jsonl.value.column) == (SURROGATE_WHAT, 1, 28)
    assert (doc.value.what, doc.value.line, doc.value.column) == (SURROGATE_WHAT, 1, 29)
    assert jsonl.value.hint == doc.value.hint == "Remove the escape or re-export the file as valid UTF-8 text"


@pytest.mark.anyio
async def test_the_async_reader_refuses_the_same() -> None:
    with pytest.raises(InvalidMessage) as exc:
        [m async for m in aread_messages(io.BytesIO(b'[{"role":"user","content":"a\\ud800b"}]'))]
    assert (exc.value.what, exc.value.column) == (SURROGATE_WHAT, 29)
    with pytest.raises(LimitExceeded) as deep:
        [m async for m in aread_messages(io.BytesIO(b"[" * 1000 + b"]" * 1000))]
    assert (deep.value.limit, deep.value.column) == ("max_depth", 129)


def test_bad_utf8_in_a_document_names_its_column() -> None:
    with pytest.raises(InvalidMessage) as exc:
        read(b'[{"role":"user","content":"a\xffb"}]')
    assert (exc.value.what, exc.value.line, exc.value.column) == ("not UTF-8 text (byte 0xff)", 1, 29)
