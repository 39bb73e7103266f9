"""Mutated real records: every reader ends with repaired messages or a positioned error.

Issue 40: an attacker mutated records of the real samples in ``../shared/samples/`` (a key
deleted, a value's type swapped, junk values, nesting added) and read them through
:func:`normalizer.read_messages` / :func:`normalizer.read_conversations` under every
``format=``; some ended in a ``KeyError`` traceback. This fuzzer does the same, under
hypothesis, over every sample of every format (:data:`KINDS`: a format added later, Gemini
CLI or opencode, is one line there). Each example is one sample file with one to three
mutations (:class:`Mutation`: a key or element deleted, a value's type swapped, junk put in,
nesting added or taken away, a key added), read under its own format, under ``auto`` or
under another one (``--from``), on ``error`` or on ``skip``, through ``read_messages`` or
``read_conversations``. The outcome is either

* output: the messages read, repaired by the core, are valid (the pairing rules hold),
  nothing the reader gave is lost in the repair, and repairing the output again changes
  nothing (a fixed point); or
* a :class:`~normalizer.NormalizerError` that says where: an :class:`~normalizer.InputError`
  with a file line (and the file's name) or a message index. Any other exception fails.

The in-format session repair (:func:`normalizer.formats.repair_session`, the path of
``chatnorm repair --in-place``) gets the mutated Claude Code and Codex files too: output or
a positioned InputError, and its output repaired again is the same bytes.

There are no Responses or Anthropic sample files; their records are taken from real ones
unchanged: a Codex rollout's ``response_item`` payloads are Responses input items, a Claude
Code line's ``message`` is an Anthropic Messages message.

Examples: a fixed seed (``derandomize``) and :data:`EXAMPLES` (150) per test and format in
CI (about 22 s for the whole module on the 2-core machine). For a longer hunt set
``CHATNORM_FUZZ_EXAMPLES`` (3000 is 20 times CI's, about 10 minutes): that many examples,
with a random seed each run; a failure prints its :class:`Case` ("Draw 1: Case(...)")::

    CHATNORM_FUZZ_EXAMPLES=3000 python -m pytest tests/formats/test_fuzz_readers.py -k mutated

Each defect found is fixed in the reader with an InputError that says where, what was
expected and what to do, and its Case pinned in :data:`FOUND` (a parametrized regression
test; hypothesis's ``@example`` cannot name a draw of ``st.data()``), where it failed before.
"""

from __future__ import annotations

import copy
import io
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from helpers import assert_nothing_lost, assert_pairing_rules
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from realdata import HAVE_SAMPLES, SAMPLES, SKIP_REASON
from test_hostile_records import keys as hostile_keys
from test_hostile_records import typed_values

import normalizer
from normalizer import InputError, NormalizerError, Report
from normalizer._messages import validate_message
from normalizer.formats import FORMATS as READERS
from normalizer.formats import read_conversations, read_messages, repair_session

pytestmark = pytest.mark.skipif(not HAVE_SAMPLES, reason=SKIP_REASON)

_ENV = os.environ.get("CHATNORM_FUZZ_EXAMPLES")
#: Examples per test and format: fixed in CI, more on demand (see the docstring).
EXAMPLES = int(_ENV) if _ENV else 150
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=_ENV is None,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


# -- the samples, one kind per format --------------------------------------------------------


def _codex_payloads(records: list[Any]) -> list[Any]:
    """A rollout's Responses input items, as the API and the Agents SDK store them."""
    return [r["payload"] for r in records if r.get("type") == "response_item"]


def _claude_messages(records: list[Any]) -> list[Any]:
    """A Claude Code session's API messages, as an Anthropic request's history holds them."""
    return [r["message"] for r in records if r.get("type") in ("user", "assistant") and not r.get("isSidechain")]


def _codex_request(records: list[Any]) -> Any:
    """The items as a Responses request body's ``input`` (a JSON document)."""
    return {"model": "gpt-5", "instructions": "Be brief.", "input": _codex_payloads(records)}


def _claude_request(records: list[Any]) -> Any:
    """The messages as an Anthropic request (a JSON document with ``system``)."""
    return {"model": "claude", "system": [{"type": "text", "text": "Be brief."}], "messages": _claude_messages(records)}


@dataclass(frozen=True)
class Kind:
    """Sample files of one format: ``glob`` under the samples, read as ``format``; with
    ``extract``, the file's JSONL records become what it returns: a list of records (written
    as JSONL) or a JSON document."""

    format: str
    glob: str
    extract: Optional[Callable[[list[Any]], Any]] = None


KINDS = [
    Kind("claude-code", "claude_code/*.jsonl"),
    Kind("claude-code", "real/claude_code/*.jsonl"),
    Kind("codex", "codex_rollout/*.jsonl"),
    Kind("codex", "real/codex/*.jsonl"),
    Kind("responses", "codex_rollout/*.jsonl", _codex_payloads),
    Kind("responses", "real/codex/*.jsonl", _codex_payloads),
    Kind("anthropic", "claude_code/*.jsonl", _claude_messages),
    Kind("anthropic", "real/claude_code/*.jsonl", _claude_messages),
    Kind("responses", "codex_rollout/*.jsonl", _codex_request),
    Kind("anthropic", "claude_code/*.jsonl", _claude_request),
    Kind("chat", "hermes/*.json"),
    Kind("sharegpt", "chat_training/*.json"),
    Kind("finetune", "chat_training/*.jsonl"),
    # Kind("gemini-cli", "wild/gemini_cli/*.jsonl"),   # when its reader lands
    # Kind("opencode", "wild/opencode/*.json"),
]
FORMATS = sorted({k.format for k in KINDS})
ALL_FORMATS = sorted(READERS)  # read_as: a sample is also read as each other format (--from X)
SESSION_FORMATS = ["claude-code", "codex"]


@dataclass(frozen=True)
class Sample:
    name: str  # path under the samples, and ":format" when its records were extracted
    format: str
    jsonl: bool  # one record a line; else one JSON document (the root below)
    root: Any  # the list of records (JSONL) or the document


@cache
def samples(fmt: str) -> dict[str, Sample]:
    found: dict[str, Sample] = {}
    if not HAVE_SAMPLES:
        return found
    for kind in (k for k in KINDS if k.format == fmt):
        for path in sorted(SAMPLES.glob(kind.glob)):
            rel = path.relative_to(SAMPLES).as_posix()
            text = path.read_text(encoding="utf-8")
            root: Any = json.loads(text) if path.suffix == ".json" else [json.loads(line) for line in text.splitlines() if line.strip()]
            if kind.extract:
                root, rel = kind.extract(root), f"{rel}:{kind.extract.__name__.strip('_')}"
                if not (root.get("messages", True) if isinstance(root, dict) else root):
                    continue  # (a sub-agent file: no main thread)
            found[rel] = Sample(rel, fmt, isinstance(root, list) and path.suffix == ".jsonl", root)
    return found


# -- mutations ------------------------------------------------------------------------------

Path_ = tuple[Any, ...]  # keys and indexes from the root


@dataclass(frozen=True)
class Mutation:
    """One edit at ``path``: ``delete`` the key or element, ``swap`` the value's type for
    ``arg`` (``str``, ``list``, ``dict``, ``int``, ``null``), ``junk`` it (``arg`` the new
    value), ``nest`` it ``arg`` levels deeper, ``lift`` the value at the path ``arg`` inside
    it to its place (a record becomes one of its messages), or ``add`` a key (``arg``:
    ``(key, value)``)."""

    path: Path_
    op: str
    arg: Any = None


@dataclass(frozen=True)
class Case:
    """One example: a sample, its mutations, and how it is read."""

    sample: str
    mutations: tuple[Mutation, ...]
    read_as: str = ""  # the format named: "" the sample's own, or "auto", or another one
    skip: bool = False  # on_invalid="skip"
    stream: bool = False  # read_messages (one stream of messages), not read_conversations


def _swap(value: Any, to: str) -> Any:
    """``value`` as a value of another JSON type, keeping what it holds where it can."""
    if to == "str":
        return value if isinstance(value, str) else json.dumps(value)
    if to == "list":
        if isinstance(value, dict):
            return list(value.values())
        return [] if value is None else [value]
    if to == "dict":
        if isinstance(value, list):
            return {str(i): v for i, v in enumerate(value)}
        return {"value": value}
    if to == "int":
        return len(value) if isinstance(value, (str, list, dict)) else 1
    return None


def _apply(root: Any, m: Mutation) -> None:
    """Edit ``root`` in place; a path an earlier mutation removed is left alone."""
    *parents, last = m.path
    node = root
    for step in parents:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return
    if not isinstance(node, (dict, list)) or (isinstance(node, dict) and last not in node) or (
        isinstance(node, list) and not (isinstance(last, int) and last < len(node))
    ):
        return
    if m.op == "delete":
        del node[last]
    elif m.op == "swap":
        node[last] = _swap(node[last], m.arg)
    elif m.op == "junk":
        node[last] = m.arg
    elif m.op == "nest":
        value = node[last]
        for level in range(m.arg):
            value = [value] if level % 2 else {"value": value}
        node[last] = value
    elif m.op == "lift":  # the value replaced by one inside it: a level of nesting less
        value = node[last]
        for step in m.arg:
            try:
                value = value[step]
            except (KeyError, IndexError, TypeError):
                return
        node[last] = value
    elif m.op == "add" and isinstance(node[last], dict):
        key, value = m.arg
        node[last][key] = value


def mutated(case: Case) -> tuple[Sample, bytes]:
    """The case's sample with its mutations, as the bytes of a file of its kind."""
    sample = samples_by_name()[case.sample]
    root = copy.deepcopy(sample.root)
    for m in case.mutations:  # (copied: a junk value is never shared, the next edit may change it)
        _apply(root, copy.deepcopy(m))
    if sample.jsonl:
        return sample, b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n" for r in root)
    return sample, json.dumps(root, ensure_ascii=False).encode("utf-8", "surrogatepass")


@cache
def samples_by_name() -> dict[str, Sample]:
    return {name: s for fmt in FORMATS for name, s in samples(fmt).items()}


junk = st.one_of(
    typed_values,
    st.sampled_from([None, "", 0, -1, 2**70, 1.5, True, [], {}, "\x00", {"type": "text"}, [{"type": "text"}], [None]]),
)


@st.composite
def paths(draw: st.DrawFn, root: Any) -> Path_:
    """A path to a value in ``root``, one step at least (a record of a JSONL file), then
    deeper by chance."""
    path: list[Any] = []
    node = root
    while True:
        children = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not children or (path and draw(st.integers(0, 2)) == 0):
            break
        step = draw(st.sampled_from(children))
        path.append(step)
        node = node[step]
    return tuple(path)


@st.composite
def mutations(draw: st.DrawFn, sample: Sample) -> Mutation:
    path = draw(paths(sample.root))
    op = draw(st.sampled_from(["delete", "swap", "junk", "nest", "lift", "add"]))
    if op == "swap":
        return Mutation(path, op, draw(st.sampled_from(["str", "list", "dict", "int", "null"])))
    if op == "junk":
        return Mutation(path, op, draw(junk))
    if op == "nest":
        return Mutation(path, op, draw(st.sampled_from([1, 2, 3, 300])))
    if op == "lift":
        node = sample.root
        for step in path:
            node = node[step]
        return Mutation(path, op, draw(paths(node)) if isinstance(node, (dict, list)) and node else ())
    if op == "add":
        return Mutation(path, op, (draw(hostile_keys), draw(junk)))
    return Mutation(path, op)


@st.composite
def cases(draw: st.DrawFn, fmt: str) -> Case:
    sample = draw(st.sampled_from(sorted(samples(fmt).values(), key=lambda s: s.name)))
    found = tuple(draw(st.lists(mutations(sample), min_size=1, max_size=3)))
    read_as = draw(st.sampled_from(["", "auto"]) | st.sampled_from(["", "auto", *ALL_FORMATS]))
    return Case(sample.name, found, read_as=read_as, skip=draw(st.booleans()), stream=draw(st.booleans()))


# -- the properties --------------------------------------------------------------------------


def assert_positioned(exc: NormalizerError, source: str) -> None:
    """The error is an InputError that says where: a line of the file (named), or a message."""
    assert isinstance(exc, InputError), f"{type(exc).__name__}, not an InputError: {exc}"
    if exc.what.startswith("no record of this file was recognised"):
        assert exc.source == source, str(exc)  # a verdict on the whole file: it names the file
        return
    assert exc.line is not None or exc.index is not None, f"no position: {exc}"
    if exc.line is not None:
        assert exc.source == source and str(exc).startswith(f"{source}:{exc.line}"), str(exc)


def read_and_repair(case: Case) -> None:
    """Read the mutated file; each conversation read is repaired: valid, nothing the reader
    gave lost, a fixed point. Else a positioned error (see the module docstring)."""
    sample, raw = mutated(case)
    source = "mutated"
    f = io.BytesIO(raw)
    f.name = source  # type: ignore[attr-defined]
    report = Report()
    on_invalid = "skip" if case.skip else "error"
    try:
        fmt = case.read_as or sample.format
        if case.stream:
            conversations: Any = [read_messages(f, fmt, report=report, on_invalid=on_invalid)]
        else:
            conversations = (conv.messages for conv in read_conversations(f, fmt, report=report, on_invalid=on_invalid))
        for conversation in conversations:
            messages = list(conversation)
            try:
                stream = normalizer.repair(messages)
                out = list(stream)
            except InputError as exc:  # the core refused a message: it says which
                assert exc.index is not None, str(exc)
                continue
            for index, message in enumerate(out):
                validate_message(message, index)
            assert_pairing_rules(out)
            assert_nothing_lost(messages, out, stream.report)
            assert list(normalizer.repair(out)) == out, "repairing the output again changed it"
    except NormalizerError as exc:
        assert_positioned(exc, source)


def repair_in_format(case: Case) -> None:
    """The session repairer on the mutated file: output, and the output repaired again is
    the same bytes; or a positioned error."""
    sample, raw = mutated(case)
    out = io.BytesIO()
    fmt = "auto" if case.read_as == "auto" else sample.format
    f = io.BytesIO(raw)
    f.name = "mutated"  # type: ignore[attr-defined]
    try:
        repair_session(f, out, fmt)
    except NormalizerError as exc:
        assert_positioned(exc, "mutated")
        assert exc.index is None, f"a session's error is placed by its line: {exc}"
        return
    again = io.BytesIO()
    repair_session(io.BytesIO(out.getvalue()), again, fmt)
    assert again.getvalue() == out.getvalue(), "repairing the session again changed it"


# Defects the fuzzer found, pinned: each failed before its fix. (why, "read" or "session", case)
LF_V1 = "chat_training/llamafactory_reason_tool_use_demo_50_first21lines.jsonl"
FOUND: list[tuple[str, str, Case]] = [
    # Issue 40: KeyError: 'text' (as_text / the Responses assistant content): a text part
    # with its text under 'value' (LLaMA-Factory's), or with none, read as another format.
    ("v1-user-message-as-anthropic", "read", Case(LF_V1, (Mutation((0,), "lift", ("messages", 1)),), read_as="anthropic")),
    ("v1-user-message-as-responses", "read", Case(LF_V1, (Mutation((0,), "lift", ("messages", 1)),), read_as="responses")),
    (
        "anthropic-text-part-without-text",
        "read",
        Case("claude_code/ccviewer_v1.0.108_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl:claude_messages",
             (Mutation((2, "content", 0, "text"), "delete"),), read_as="auto"),
    ),
    (
        "codex-session-payload-type-list",  # was: TypeError: unhashable type: 'list' (_Codex.classify)
        "session",
        Case("codex_rollout/coda_rollout-2025-10-04T22-31-15_first32lines.jsonl", (Mutation((1, "payload", "type"), "swap", "list"),)),
    ),
    (
        "claude-stub-for-a-tool-use-line-with-a-list-uuid",  # was: TypeError: unhashable type: 'list' (_surviving)
        "session",
        Case("real/claude_code/spotter_v2.1.38_short.jsonl", (Mutation((10,), "delete"), Mutation((7, "uuid"), "swap", "list"))),
    ),
    (
        "session-of-another-format",  # was: "this is a responses file, ..." with no line
        "session",
        Case("codex_rollout/coda_rollout-2025-10-04T22-31-15_first32lines.jsonl", (Mutation((0, "type"), "junk", "message"),),
             read_as="auto"),
    ),
]


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.data())
def test_mutated_samples_read_or_fail_clearly(fmt: str, data: st.DataObject) -> None:
    """Every reader, on mutated samples of each format: repaired output or a positioned error."""
    read_and_repair(data.draw(cases(fmt)))


@pytest.mark.parametrize("fmt", SESSION_FORMATS)
@FUZZ
@given(data=st.data())
def test_mutated_sessions_repair_in_format_or_fail_clearly(fmt: str, data: st.DataObject) -> None:
    """``chatnorm repair --in-place``'s repairer, on mutated sessions: a fixed point or a positioned error."""
    repair_in_format(data.draw(cases(fmt)))


@pytest.mark.parametrize(("why", "stage", "case"), FOUND, ids=[why for why, _, _ in FOUND])
def test_found_defects_stay_fixed(why: str, stage: str, case: Case) -> None:
    """Each case as found, and read under the sample's own format and under auto too."""
    check = read_and_repair if stage == "read" else repair_in_format
    for read_as in dict.fromkeys([case.read_as, "", "auto"]):
        check(Case(case.sample, case.mutations, read_as=read_as, skip=case.skip, stream=case.stream))


@pytest.mark.parametrize(("why", "case"), [(why, case) for why, stage, case in FOUND if stage == "read"],
                         ids=[why for why, stage, _ in FOUND if stage == "read"])
def test_found_defects_on_the_command_line(why: str, case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``chatnorm repair --from FORMAT`` on the same file: one error line that says where
    (file:line:column) and what was expected, exit status 1, no traceback."""
    from normalizer.cli._main import main

    sample, raw = mutated(case)
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(raw)
    assert main(["repair", "-q", "--from", case.read_as or sample.format, str(path), "-o", str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    line = case.mutations[0].path[0] + 1  # the mutated record's (a JSONL sample)
    assert err.startswith(f"error: {path}:{line}:1: ") and "a 'text' part needs a string 'text', got none" in err
    assert "Traceback" not in err


def test_every_format_has_samples() -> None:
    """Guards the table: a glob that matches nothing would fuzz nothing."""
    assert {fmt: bool(samples(fmt)) for fmt in FORMATS} == dict.fromkeys(FORMATS, True)


def test_claude_session_result_with_a_list_id_beside_an_orphan() -> None:
    """The session repairer removes an orphan result from a line whose other result has a
    list for its id (was: TypeError: unhashable type: 'list', the id looked up in a set);
    the block it cannot read is kept, the orphan removed and recorded."""
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {
            "id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
            {"type": "tool_result", "tool_use_id": "gone", "content": "r"},
            {"type": "tool_result", "tool_use_id": ["x"], "content": "r"}]}},
    ]
    out = io.BytesIO()
    report = repair_session(io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines)), out, "claude-code")
    assert json.loads(out.getvalue().splitlines()[2])["message"]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
        {"type": "tool_result", "tool_use_id": ["x"], "content": "r"},
    ]
    assert dict(report.counts) == {"drop_orphan_result": 1}
