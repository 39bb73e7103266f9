"""The peers' own test cases, ported to this API: every case of ``../shared/peers/cases.json``.

55 cases from pydantic-ai's transcript-repair tests and the OpenAI Agents SDK's converter
tests. Each has an ``input`` (chat messages, or Responses items when ``via`` is
``"responses"``: read with ``read_messages(items, format="responses")`` first) and an
``expect`` saying what to check:

=================  ==============================================================================
``options``        the repair's options (``profile`` among them)
``output``         the repaired messages, exactly (``ignore`` below)
``reader_output``  the reader's messages, before the repair, exactly
``kinds``          the kinds of the records, in order of first appearance (reader's, then repair's)
``valid``          whether ``check()`` finds nothing for the profile (default: it must not)
``raises``         ``"project"``: reading or repairing raises this project's ``InputError``
``ignore``         message and call keys left out of the comparison; by default the one the
                   Responses reader adds by design (``reasoning_items``: the whole reasoning item
                   kept for replay; the item's other fields are not on the chat messages)
``props``          named properties of the output (see :data:`PROPS`)
=================  ==============================================================================

A case's ``difference`` says where this project deliberately differs from the peer; the
output or properties it is checked against are ours. :data:`DIFFERENCES` documents, for the
cases where the expectation itself is not ours, what we check instead and why.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest

import normalizer
from normalizer import InputError, Report, check
from normalizer.formats import read_messages

from realdata import PEER_CASES, SKIP_REASON

CASES: list[dict[str, Any]] = json.loads(PEER_CASES.read_text(encoding="utf-8")) if PEER_CASES.is_file() else []

Message = dict[str, Any]

# Keys the Responses reader adds by design (module docstring), left out unless a case says.
DEFAULT_IGNORE: dict[str, list[str]] = {"msg": ["reasoning_items"], "call": []}

#: Cases whose expectation is not ours, with what we check instead and why.
DIFFERENCES: dict[str, tuple[str, dict[str, Any]]] = {}


def _strip(messages: list[Message], ignore: dict[str, list[str]]) -> list[Message]:
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if k not in ignore["msg"]}
        if isinstance(m.get("tool_calls"), list):
            m["tool_calls"] = [{k: v for k, v in c.items() if k not in ignore["call"]} for c in m["tool_calls"]]
        out.append(m)
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _results(out: list[Message], call_id: str) -> list[Message]:
    return [m for m in out if m["role"] == "tool" and m.get("tool_call_id") == call_id]


class Run:
    """One case, run: the input, the reader's messages, the repaired ones, the reports."""

    def __init__(self, case: dict[str, Any]) -> None:
        expect = case["expect"]
        self.options = dict(expect.get("options", {}))
        self.profile = self.options.get("profile", "default")
        self.stub = self.options.get("stub_text", normalizer.DEFAULT_STUB_TEXT)
        self.input = case["input"]
        self.reader_report = Report()
        if expect.get("via") == "responses":
            self.read = list(read_messages(self.input, "responses", report=self.reader_report))
        else:
            self.read = self.input
        self.repair = normalizer.repair(self.read, **self.options)
        self.output = list(self.repair)
        self.report = self.repair.report

    def records(self) -> list[Any]:
        return [*self.reader_report.records, *self.report.records]


def _count(run: Run, arg: dict[str, Any]) -> bool:
    return sum(m["role"] == arg["role"] for m in run.output) == arg["n"]


def _answered(run: Run, ids: list[str]) -> bool:
    # a real result: its tool message is there and is not a stub
    return all(any(m["content"] != run.stub for m in _results(run.output, i)) for i in ids)


def _stubbed(run: Run, ids: list[str]) -> bool:
    stubs = {r.detail for r in run.report.records if r.kind == "stub_missing_result"}
    return all([m["content"] for m in _results(run.output, i)] == [run.stub]
               and f"call {i!r} had no result; added a stub result" in stubs for i in ids)


def _result(run: Run, arg: dict[str, Any]) -> bool:
    [result] = _results(run.output, arg["id"])
    text = _text(result["content"])
    return text == arg["equals"] if "equals" in arg else arg["contains"] in text


def _calls(run: Run) -> list[str]:
    return [c["id"] for m in run.output for c in m.get("tool_calls") or ()]


def _arguments(run: Run, arg: dict[str, Any]) -> bool:
    [call] = [c for m in run.output for c in m.get("tool_calls") or () if c["id"] == arg["id"]]
    return bool(call["function"]["arguments"] == arg["equals"])


def _image_url(run: Run, arg: dict[str, Any]) -> bool:
    content = run.output[arg["index"]]["content"]
    return isinstance(content, list) and any(
        p.get("type") == "image_url" and p["image_url"]["url"] == arg["url"] for p in content)


def _tool_text_only(run: Run) -> bool:
    # the openai SDK's ChatCompletionToolMessageParam.content: str | Iterable[text part]
    return all(isinstance(m["content"], str) or all(p.get("type") == "text" for p in m["content"])
               for m in run.output if m["role"] == "tool")


def _deterministic(run: Run) -> bool:
    again = normalizer.repair(run.read, **run.options)
    return list(again) == run.output and again.report.records == run.report.records


#: Each property of ``expect.props``: what it asserts of the run.
PROPS: dict[str, Callable[[Run, Any], bool]] = {
    "unchanged": lambda run, arg: (run.output == run.input) is arg,
    "report_empty": lambda run, arg: (run.records() == []) is arg,
    "deterministic": lambda run, arg: _deterministic(run) is arg,
    "count": _count,
    "roles": lambda run, arg: [m["role"] for m in run.output] == arg,
    "calls": lambda run, arg: _calls(run) == arg,
    "answered": _answered,
    "stubbed": _stubbed,
    "result": _result,
    "arguments": _arguments,
    "in_report": lambda run, arg: any(arg in orjson.dumps(r.dropped).decode() for r in run.records()),
    "text_in": lambda run, arg: all(any(t in _text(m["content"]) for m in run.output if m["role"] == arg["role"])
                                    for t in arg["texts"]),
    "tool_content_count": lambda run, arg: sum(m["role"] == "tool" and m["content"] == arg["equals"]
                                               for m in run.output) == arg["n"],
    "reasoning": lambda run, arg: run.output[arg["index"]].get("reasoning_content") == arg["equals"],
    "content_equals": lambda run, arg: run.output[arg["index"]]["content"] == arg["equals"],
    "content_null": lambda run, arg: "content" in run.output[arg["index"]] and run.output[arg["index"]]["content"] is None,
    "image_url": _image_url,
    "tool_text_only": lambda run, arg: _tool_text_only(run) is arg,
}


@pytest.mark.skipif(not CASES, reason=SKIP_REASON)
def test_there_are_55_cases_and_every_expectation_is_understood() -> None:
    assert len(CASES) == 55
    keys = {"options", "output", "reader_output", "kinds", "valid", "raises", "ignore", "props", "via"}
    for case in CASES:
        assert set(case["expect"]) <= keys, case["name"]
        for prop in case["expect"].get("props", []):
            assert set(prop) <= set(PROPS), (case["name"], prop)
    assert set(DIFFERENCES) <= {c["name"] for c in CASES if "difference" in c}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_peer_case(case: dict[str, Any]) -> None:
    expect = dict(case["expect"])
    if case["name"] in DIFFERENCES:
        expect.update(DIFFERENCES[case["name"]][1])
        expect["ignore"] = {"msg": [], "call": []}
    if expect.get("raises") == "project":
        with pytest.raises(InputError):
            Run(case)
        return
    run = Run(case)
    ignore = expect.get("ignore", DEFAULT_IGNORE)
    if "reader_output" in expect:
        assert _strip(run.read, ignore) == expect["reader_output"]
    if "output" in expect:
        assert _strip(run.output, ignore) == expect["output"]
    if "kinds" in expect:
        assert list(dict.fromkeys(r.kind for r in run.records())) == expect["kinds"]
    for prop in expect.get("props", []):
        [(name, arg)] = prop.items()
        assert PROPS[name](run, arg), (name, arg, run.output)
    valid = check(run.output, profile=run.profile) == []
    assert valid is expect.get("valid", True), check(run.output, profile=run.profile)
    # Whatever the case, the input is never changed and a second pass changes nothing.
    again = normalizer.repair(run.output, **run.options)
    assert list(again) == run.output and again.report.records == []
