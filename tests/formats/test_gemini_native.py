"""Gemini native contents <-> chat messages (normalizer.formats._gemini): exact outputs on
small hand-written histories, both directions, and what the core makes of the defects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import assert_pairing_rules

import normalizer
from normalizer import InvalidMessage
from normalizer._report import new_report
from normalizer.formats._common import without_source
from normalizer.formats._gemini import (
    THOUGHT_KEY,
    Calls,
    GeminiConverter,
    GeminiWriter,
    content_to_messages,
    message_to_parts,
)

USER = {"role": "user", "parts": [{"text": "What does a.txt say?"}]}
ANSWER = {"role": "model", "parts": [{"text": "It says hi."}]}


def read(contents: list[Any], system: Any = None) -> tuple[list[dict[str, Any]], Any]:
    report = new_report()
    conv = GeminiConverter(report)
    out = conv.meta("systemInstruction", system) if system is not None else []
    for content in contents:
        out += conv.feed(content)
    return out + conv.close(), report


def write(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any]:
    writer = GeminiWriter()
    out = [c for m in messages for c in writer.feed(m)]
    return out + writer.close(), writer.system_instruction


def call(name: str, args: Any, id: str | None = None, **part: Any) -> dict[str, Any]:
    fc = {"name": name, "args": args} if id is None else {"id": id, "name": name, "args": args}
    return {"functionCall": fc, **part}


def response(name: str, value: Any, id: str | None = None) -> dict[str, Any]:
    fr = {"name": name, "response": value} if id is None else {"id": id, "name": name, "response": value}
    return {"functionResponse": fr}


def test_calls_with_ids_thoughts_and_signatures_exact() -> None:
    contents = [
        USER,
        {"role": "model", "parts": [
            {"text": "Reading it.", "thought": True, "thoughtSignature": "c2lnLTE="},
            call("read_file", {"path": "a.txt"}, "c1", thoughtSignature="c2lnLTI="),
        ]},
        {"role": "user", "parts": [response("read_file", {"output": "hi"}, "c1")]},
        {"role": "model", "parts": [{"text": "It says "}, {"text": "hi.", "thoughtSignature": "c2lnLTM="}]},
    ]
    out, report = read(contents, system={"parts": [{"text": "Be brief."}]})
    assert out == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What does a.txt say?"},
        {"role": "assistant", "content": None, "reasoning_content": "Reading it.",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"a.txt"}'},
                         "extra_content": {"google": {"thought_signature": "c2lnLTI="}}}],
         THOUGHT_KEY: [{"text": "Reading it.", "thought": True, "thoughtSignature": "c2lnLTE="}]},
        # (the response's name rides aside, for the writer: a chat tool message has none)
        {"role": "tool", "tool_call_id": "c1", "content": "hi", "source_fields": {"name": "read_file"}},
        {"role": "assistant", "content": "It says hi.", "extra_content": {"google": {"thought_signature": "c2lnLTM="}}},
    ]
    assert not report.counts
    back, system = write(out)
    assert system == {"parts": [{"text": "Be brief."}]}
    # Everything back byte-exact, but the answer's two text parts, which are one now.
    assert back[:3] == contents[:3]
    assert back[3] == {"role": "model", "parts": [{"text": "It says hi.", "thoughtSignature": "c2lnLTM="}]}


def test_calls_without_ids_pair_by_name_and_position() -> None:
    contents = [
        USER,
        {"role": "model", "parts": [call("ls", {}), call("cat", {"f": "a"}), call("cat", {"f": "b"})]},
        # Responses in another order than the calls: matched by name, then position.
        {"role": "user", "parts": [response("cat", {"output": "A"}), response("ls", {"files": ["a", "b"]}),
                                   response("cat", {"output": "B"})]},
    ]
    out, report = read(contents)
    calls = out[1]["tool_calls"]
    assert [c["id"] for c in calls] == ["gemini_ls_1", "gemini_cat_2", "gemini_cat_3"]
    assert all(c["source_fields"] == {"assigned_id": True} for c in calls)
    assert [(m["tool_call_id"], m["content"]) for m in out[2:]] == [
        ("gemini_cat_2", "A"), ("gemini_ls_1", '{"files":["a","b"]}'), ("gemini_cat_3", "B")]
    assert out[3]["source_fields"] == {"name": "ls", "assigned_id": True, "response_json": True}
    assert report.counts == {"assign_call_id": 3}
    back, _ = write(out)
    assert back == contents  # the ids made here are left out again; the JSON is an object again


def test_duplicate_missing_orphan_and_split_turn_repaired_by_the_core() -> None:
    contents = [
        USER,
        {"role": "model", "parts": [{"text": "Let me look."}]},  # a split model turn...
        {"role": "model", "parts": [call("ls", {}, "a"), call("cat", {}, "b")]},  # ...continued
        {"role": "user", "parts": [
            response("ls", {"output": "x"}, "a"),
            response("ls", {"output": "x"}, "a"),  # duplicate
            response("grep", {"output": "?"}),  # answers no call: no id, no call of its name
        ]},  # and cat (b) is never answered
        ANSWER,
    ]
    out, report = read(contents)
    assert [m["role"] for m in out] == ["user", "assistant", "assistant", "tool", "tool", "tool", "assistant"]
    assert out[5]["tool_call_id"] == "gemini_grep_1"
    assert report.counts == {"assign_orphan_id": 1}
    repaired = normalizer.repair(out)
    history = list(repaired)
    assert_pairing_rules(history)
    counts = repaired.report.counts
    assert counts["merge_assistant"] == 1
    assert counts["drop_duplicate_result"] == 1
    assert counts["drop_orphan_result"] == 1
    assert counts["stub_missing_result"] == 1
    back, _ = write(history)
    assert [c["role"] for c in back] == ["user", "model", "user", "model"]
    names = [next(iter(p["functionResponse"].values())) for p in back[2]["parts"]]
    assert names == ["a", "b"]  # one response per call, in call order, with the calls' ids
    assert [p["functionResponse"]["name"] for p in back[2]["parts"]] == ["ls", "cat"]


def test_media_and_unknown_parts() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBO"}}
    pdf = {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/f.pdf"}}
    out, _ = read([{"role": "user", "parts": [{"text": "Look"}, image, pdf]}])
    assert out == [{"role": "user", "content": [
        {"type": "text", "text": "Look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
        pdf,
    ]}]
    back, _ = write(out)
    assert back == [{"role": "user", "parts": [{"text": "Look"}, image, pdf]}]
    report = new_report()
    code = {"executableCode": {"language": "PYTHON", "code": "1+1"}}
    msgs = content_to_messages({"role": "model", "parts": [code, {"text": "2"}]}, Calls(), report)
    assert msgs == [{"role": "assistant", "content": "2"}]
    assert report.records[0].kind == "drop_part" and report.records[0].dropped == code


def test_message_to_parts_of_foreign_messages() -> None:
    # Reasoning read from another provider is not sent: Gemini takes back only its own thoughts.
    msg = {"role": "assistant", "content": "ok", "reasoning_content": "hmm",
           "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}
    assert message_to_parts(msg) == ("model", [{"text": "ok"}, {"functionCall": {"id": "call_1", "name": "f", "args": {"a": 1}}}])
    tool = {"role": "tool", "tool_call_id": "call_1", "content": "done"}
    assert message_to_parts(tool, {"call_1": "f"}) == (
        "user", [{"functionResponse": {"id": "call_1", "name": "f", "response": {"output": "done"}}}])
    assert message_to_parts({"role": "system", "content": "S"}) == ("system", [{"text": "S"}])


@pytest.mark.parametrize("bad", [
    {"role": "assistant", "content": "x"},
    {"role": "model", "parts": "text"},
    {"role": "model", "parts": [{"functionCall": {"args": {}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": 3}}]},
])
def test_refused_with_a_clear_error(bad: Any) -> None:
    with pytest.raises(InvalidMessage):
        content_to_messages(bad, line=3)


@pytest.mark.parametrize("arguments", ["[1, 2]", "not json", '"text"'])
def test_writer_refuses_arguments_that_are_no_object(arguments: str) -> None:
    msg = {"role": "assistant", "content": None,
           "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}]}
    with pytest.raises(InvalidMessage, match="not a JSON object"):
        message_to_parts(msg)


# -- wired as a format: detection, documents, the command line, --to gemini ------------------------


def _cli(*args: Any, input: bytes | None = None) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "normalizer", *map(str, args)], input=input, capture_output=True,
                          timeout=60)


_BROKEN = [
    USER,
    {"role": "model", "parts": [{"text": "Let me look."}]},
    {"role": "model", "parts": [call("ls", {}, "a"), call("cat", {"f": "x"}, "b")]},
    {"role": "user", "parts": [response("ls", {"output": "x"}, "a"), response("ls", {"output": "x"}, "a"),
                               response("grep", {"output": "?"})]},
    ANSWER,
]
_SYSTEM = {"parts": [{"text": "be brief"}]}
_COUNTS = "assign_orphan_id 1, drop_duplicate_result 1, drop_orphan_result 1, merge_assistant 1, stub_missing_result 1"


def test_a_content_is_guessed_as_gemini() -> None:
    from normalizer.formats._detect import Guess, guess

    assert guess({"role": "model", "parts": [{"text": "x"}]}) == Guess("gemini", True)
    assert guess({"role": "user", "parts": [{"text": "x"}]}) == Guess("gemini", True)
    assert guess({"role": "user", "content": "x"}).format == "chat"


@pytest.mark.parametrize("layout", ["jsonl", "document", "system-last", "one-line"])
def test_contents_are_read_detected_from_jsonl_and_request_bodies(tmp_path: Any, layout: str) -> None:
    import json

    path = tmp_path / "contents.json"
    if layout == "jsonl":
        path.write_text("".join(json.dumps(c) + "\n" for c in _BROKEN))
    elif layout == "document":
        path.write_text(json.dumps({"systemInstruction": _SYSTEM, "contents": _BROKEN}, indent=1))
    elif layout == "system-last":
        path.write_text(json.dumps({"contents": _BROKEN, "systemInstruction": _SYSTEM}, indent=1))
    else:
        path.write_text(json.dumps({"contents": _BROKEN, "systemInstruction": _SYSTEM}))
    messages = list(normalizer.formats.read_messages(path))
    assert messages == list(normalizer.formats.read_messages(path, format="gemini"))
    expected, _ = read(_BROKEN, None if layout == "jsonl" else _SYSTEM)
    assert messages == [without_source(m) for m in expected]  # (the converter's fields kept aside)
    for args in ([], ["--from", "gemini"]):
        result = _cli("repair", "--to", "jsonl", *args, path)
        assert result.returncode == 0, result.stderr
        assert _COUNTS in result.stderr.decode()
        assert_pairing_rules([json.loads(line) for line in result.stdout.splitlines()])
    check = _cli("check", path)
    assert check.returncode == 1
    found = check.stdout.decode() + check.stderr.decode()
    for rule in ("tool.unanswered_call", "tool.duplicate_result", "tool.orphan_result"):
        assert rule in found


def test_to_gemini_writes_a_request_body_gemini_accepts(tmp_path: Any) -> None:
    import json

    from test_gemini_cli import assert_gemini_rules

    path = tmp_path / "contents.json"
    path.write_text(json.dumps({"contents": _BROKEN, "systemInstruction": _SYSTEM}))
    result = _cli("repair", "--to", "gemini", path)
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["systemInstruction"] == _SYSTEM
    assert_gemini_rules(body["contents"])
    again = _cli("repair", "--to", "gemini", input=result.stdout)
    assert (again.returncode, again.stdout) == (0, result.stdout)
    assert again.stderr.decode().startswith("<stdin>: 6 in, 6 out; no repairs")
    empty = _cli("repair", "--to", "gemini", input=b"")
    assert json.loads(empty.stdout) == {"contents": []}


def test_another_reader_s_source_fields_are_no_gemini_keys(tmp_path: Any) -> None:
    # A Responses item's own id and status ride in source_fields: written as Gemini, the call
    # keeps its call_id and gains no key Gemini's FunctionCall does not have.
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}",
         "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "a b"},
    ]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(items))
    done = _cli("repair", "--from", "responses", "--to", "gemini", "-q", path)
    assert done.returncode == 0, done.stderr
    contents = json.loads(done.stdout)["contents"]
    assert contents[1] == {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "ls", "args": {}}}]}
    assert contents[2]["parts"][0]["functionResponse"]["id"] == "call_1"


def test_a_system_instruction_of_several_parts_comes_back_as_written() -> None:
    converter = GeminiConverter(new_report())
    [system] = converter.meta("systemInstruction", {"parts": [{"text": "s1"}, {"text": "s2"}]})
    assert system == {"role": "system", "content": [{"type": "text", "text": "s1"}, {"type": "text", "text": "s2"}]}
