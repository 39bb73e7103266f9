"""What real files, real rejected requests and the peers' own test suites showed (issue 15).

One test (or a few) per case of the issue, each pinning the exact output: the messages, the
records, and that a second pass changes nothing. The readers' cases (formats) come first,
then the core's and the profiles'.
"""

from __future__ import annotations

import copy
from typing import Any

import normalizer
from normalizer import Report, check

Message = dict[str, Any]


def repaired(history: list[Message], **options: Any) -> tuple[list[Message], Report]:
    """The repaired history and its report; the input untouched, a second pass a no-op."""
    before = copy.deepcopy(history)
    run = normalizer.repair(history, **options)
    out = list(run)
    assert history == before, "the input must not be mutated"
    again = normalizer.repair(out, **options)
    assert list(again) == out and again.report.records == [], "a second pass must change nothing"
    return out, run.report


def kinds(report: Report) -> list[str]:
    return [r.kind for r in report.records]


# -- 3. a flat tool call {"id", "name", "arguments"} ----------------------------------------------

# The history DeepSeek rejected in a public bug report: the call has its name and arguments at
# its own top level, with no "function" wrapper.
FLAT = [
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "name": "get_weather", "arguments": '{"city": "Paris"}'}]},
    {"role": "tool", "tool_call_id": "call_0", "content": "18C, cloudy"},
    {"role": "assistant", "content": "It is 18C and cloudy."},
]


def test_a_flat_call_is_lifted_into_its_function_and_keeps_its_result() -> None:
    out, report = repaired(FLAT)
    assert out == [
        FLAT[0],
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        FLAT[2],
        FLAT[3],
    ]
    assert kinds(report) == ["lift_flat_call"]
    assert report.records[0].detail == (
        "call 0 of message 1 had 'name' and 'arguments' outside 'function'; moved them into it (type 'function')"
    )
    assert report.records[0].dropped is None


def test_a_flat_call_with_object_arguments_a_foreign_type_and_extra_keys() -> None:
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function_call", "name": "f", "arguments": {"a": 1}, "id": "c", "index": 0}]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
    ]
    out, report = repaired(history)
    assert out[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}, "index": 0}]}
    assert kinds(report) == ["lift_flat_call", "encode_arguments", "empty_content_to_null"]
    assert report.records[0].dropped == {"type": "function_call"}
    assert out[2] == history[2]


def test_a_call_with_neither_function_nor_name_is_still_dropped() -> None:
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": "hm", "tool_calls": [{"id": "c", "arguments": "{}"}]}]
    out, report = repaired(history)
    assert out == [history[0], {"role": "assistant", "content": "hm"}]
    assert kinds(report) == ["drop_nameless_call"]


# -- 8. text parts flattened with a newline -------------------------------------------------------


def test_text_parts_are_flattened_with_a_newline_in_string_profiles() -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "World"}]}]
    for profile in ("deepseek", "moonshot", "groq", "xai", "jinja-strict", "ollama"):
        out, report = repaired(history, profile=profile)
        assert out == [{"role": "user", "content": "Hello\nWorld"}], profile
        assert "flatten_content" in kinds(report), profile
        assert check(out, profile=profile) == [], profile


def test_flattening_joins_as_the_merge_does_blank_parts_skipped() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "  "}, {"type": "text", "text": "b"}]
    out, _ = repaired([{"role": "user", "content": parts}], profile="deepseek")
    merged, _ = repaired([{"role": "user", "content": "a"}, {"role": "user", "content": "  "},
                          {"role": "user", "content": "b"}], profile="deepseek")
    assert out == merged == [{"role": "user", "content": "a\nb"}]


def test_a_placeholder_stands_between_text_runs_on_their_own_lines() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    history = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": [
            {"type": "text", "text": "one"}, {"type": "text", "text": "two"}, image, {"type": "text", "text": "three"}]},
    ]
    out, report = repaired(history, profile="deepseek")
    assert out[2]["content"] == "one\ntwo\n[image_url omitted: only text can be sent here]\nthree"
    assert report.records[-1].dropped == [image]


# -- 9. the openai profile and image parts in tool messages ---------------------------------------

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/image.png"}}
IMAGE_RESULT = [
    {"role": "user", "content": "Take a screenshot."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "somecall", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "somecall", "content": [{"type": "text", "text": "visible text"}, IMAGE]},
]


def test_openai_check_flags_an_image_in_a_tool_message() -> None:
    [found] = check(IMAGE_RESULT, profile="openai")
    assert (found.index, found.rule, found.key) == (2, "OA-7", "content.text_only")
    assert found.message == (
        "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but this message "
        "with role 'tool' contains an image URL."
    )
    assert check(IMAGE_RESULT) == []  # the default profile keeps the image: lossless


def test_openai_profile_replaces_the_image_of_a_tool_message_by_a_placeholder() -> None:
    out, report = repaired(IMAGE_RESULT, profile="openai")
    assert out == [*IMAGE_RESULT[:2], {"role": "tool", "tool_call_id": "somecall",
                                       "content": "visible text\n[image_url omitted: only text can be sent here]"}]
    [record] = report.records
    assert (record.kind, record.output, record.dropped) == ("replace_non_text_part", 2, [IMAGE])
    assert record.detail == (
        "1 part(s) that are not text (image_url) replaced by a text placeholder: openai accepts only text as the "
        "content of a tool message (the parts are kept whole here)"
    )
    assert check(out, profile="openai") == []


def test_openai_profile_keeps_text_parts_and_user_images() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "what is this?"}, IMAGE]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    out, report = repaired(history, profile="openai")
    assert out == history and report.records == []
    assert check(history, profile="openai") == []


# ==================================================================================================
# The readers
# ==================================================================================================

import io  # noqa: E402

import orjson  # noqa: E402
import pytest  # noqa: E402

from normalizer import InputError  # noqa: E402
from normalizer.formats import read_conversations, read_messages  # noqa: E402


class Stream(io.BytesIO):
    """A pipe: the reader cannot read it twice (and gets at most ``reads`` bytes a read)."""

    def __init__(self, data: bytes, reads: int = 1 << 20) -> None:
        super().__init__(data)
        self.reads = reads

    def seekable(self) -> bool:
        return False

    def read(self, n: int | None = -1) -> bytes:
        return super().read(self.reads if n is None or n < 0 else min(n, self.reads))


def read(data: Any, fmt: str = "auto", *, kept: bool = False, **options: Any) -> tuple[list[Message], str | None, Report]:
    """The messages of ``data`` (bytes: a file; a Stream; records in memory); ``kept``: with
    the fields the reader keeps aside for a writer of the format (``source_fields``)."""
    stream = read_messages(io.BytesIO(data) if isinstance(data, bytes) else data, fmt, **options)
    if kept:
        stream.keep_source_fields()
    out = list(stream)
    return out, stream.format, stream.report


def records(report: Report) -> list[tuple[str, Any]]:
    return [(r.kind, r.dropped) for r in report.records]


# -- 1. an Anthropic request whose system comes after its messages ---------------------------------

# The shape of Claude Code's own request bodies: model, messages, then system and the rest.
CLAUDE_REQUEST = {
    "model": "claude-sonnet-4-5",
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "List the files."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Listing."},
                                          {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}]},
    ],
    "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    "max_tokens": 32000,
    "stream": True,
}
CLAUDE_REQUEST_MESSAGES = [
    {"role": "system", "content": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}]},
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": "Listing.", "tool_calls": [
        {"id": "toolu_1", "type": "function", "function": {"name": "Bash", "arguments": '{"command":"ls"}'}}]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py"},
]


@pytest.mark.parametrize("indent", [False, True], ids=["one-line", "indented"])
def test_a_late_system_in_a_file_is_found_by_a_first_pass(indent: bool) -> None:
    data = orjson.dumps(CLAUDE_REQUEST, option=orjson.OPT_INDENT_2 if indent else 0)
    out, fmt, report = read(data)
    assert (out, fmt, report.records) == (CLAUDE_REQUEST_MESSAGES, "anthropic", [])
    conversation = next(iter(read_conversations(io.BytesIO(data))))
    assert list(conversation.messages) == CLAUDE_REQUEST_MESSAGES
    assert conversation.extra == {k: v for k, v in CLAUDE_REQUEST.items() if k != "messages"}


def test_a_late_system_on_a_stream_is_held_for() -> None:
    out, fmt, report = read(Stream(orjson.dumps(CLAUDE_REQUEST, option=orjson.OPT_INDENT_2)))
    assert (out, fmt, report.records) == (CLAUDE_REQUEST_MESSAGES, "anthropic", [])


def test_a_stream_is_held_only_up_to_max_record_bytes() -> None:
    # Past the limit the messages go out; the system that comes after them is left out,
    # recorded whole. (Read from the file itself, it is placed first.)
    turns = [{"role": role, "content": f"{role} {i}"} for i in range(10) for role in ("user", "assistant")]
    request = {"model": "claude", "messages": turns, "system": "Be brief."}
    data = orjson.dumps(request, option=orjson.OPT_INDENT_2)
    assert len(data) > 4 * 200
    out, fmt, report = read(Stream(data, reads=100), "anthropic", max_record_bytes=200)
    assert (out, fmt) == (turns, "anthropic")
    assert records(report) == [("drop_late_system", "Be brief.")]
    assert report.records[0].detail == (
        "top-level 'system' came after the messages already read (from a stream, the messages are held only "
        "up to max_record_bytes: read the file itself to place it first)"
    )
    out, _, report = read(data, "anthropic", max_record_bytes=200)
    assert (out, report.records) == ([{"role": "system", "content": "Be brief."}, *turns], [])


@pytest.mark.parametrize("fmt", ["auto", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
def test_a_system_before_the_messages_is_given_once(fmt: str, stream: bool) -> None:
    # Found by the writers' round trip: with the format named, the system key was converted as
    # it was met and then given again by the first pass that looks for a late one.
    data = orjson.dumps({"system": "s", "messages": [{"role": "user", "content": "hi"}]})
    out, _, report = read(Stream(data) if stream else data, fmt)
    assert (out, report.records) == ([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}], [])


ONE_LINE_REQUEST = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}
ONE_LINE_MESSAGES = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "t1", "content": "ok"}]


@pytest.mark.parametrize("fmt", ["auto", "anthropic"])
def test_a_request_body_on_one_line_is_a_request(fmt: str) -> None:
    # As pasted into bug reports: a request on one line is not a fine-tuning JSONL line (one
    # has "model", the other never), and with the format named even "messages" alone says so.
    out, found, report = read(orjson.dumps(ONE_LINE_REQUEST), fmt)
    assert (out, found, report.records) == (ONE_LINE_MESSAGES, "anthropic", [])
    bare = orjson.dumps({"messages": ONE_LINE_REQUEST["messages"]})
    if fmt == "anthropic":
        assert read(bare, fmt)[:2] == (ONE_LINE_MESSAGES, "anthropic")
    else:  # alone, {"messages": [...]} on one line is a fine-tuning example
        assert read(bare, fmt)[1] == "finetune"


def test_a_hermes_snapshot_system_prompt_after_its_messages() -> None:
    snapshot = {"session_id": "s", "messages": [{"role": "user", "content": "hi"}], "system_prompt": "You are Hermes."}
    expected = [{"role": "system", "content": "You are Hermes."}, {"role": "user", "content": "hi"}]
    assert read(orjson.dumps(snapshot))[:2] == (expected, "chat")
    assert read(Stream(orjson.dumps(snapshot)))[:2] == (expected, "chat")


# -- 2. a Responses request body's instructions ---------------------------------------------------


@pytest.mark.parametrize("first", [True, False], ids=["instructions-first", "instructions-last"])
def test_responses_instructions_are_the_system_message(first: bool) -> None:
    items = [{"role": "user", "content": "Summarise."}]
    body = {"instructions": "Be terse.", "input": items} if first else {"input": items, "instructions": "Be terse."}
    expected = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Summarise."}]
    for source in (orjson.dumps(body), Stream(orjson.dumps(body))):
        out, fmt, report = read(source)
        assert (out, fmt, report.records) == (expected, "responses", [])
    out, _ = repaired(expected)
    assert out == expected


# -- 4. Claude Code sub-agent transcripts; a file in which nothing is recognised -------------------


def cc_line(kind: str, content: Any, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = fields.pop("mid", "msg_1")
    return {"type": kind, "isSidechain": True, "uuid": "u", "sessionId": "s", "message": message, **fields}


SUBAGENT = [
    cc_line("user", "Find the config loader.", parentUuid=None, agentId="a485154"),
    cc_line("assistant", [{"type": "tool_use", "id": "toolu_9", "name": "Grep", "input": {"pattern": "config"}}], parentUuid="u"),
    cc_line("user", [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "src/config.ts"}], parentUuid="u"),
    cc_line("assistant", [{"type": "text", "text": "It is src/config.ts."}], parentUuid="u", mid="msg_2"),
]


def jsonl(lines: list[Any]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def test_a_subagent_transcript_is_its_own_conversation() -> None:
    out, fmt, report = read(jsonl(SUBAGENT))
    assert fmt == "claude-code"
    assert out == [
        {"role": "user", "content": "Find the config loader."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "toolu_9", "type": "function", "function": {"name": "Grep", "arguments": '{"pattern":"config"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_9", "content": "src/config.ts"},
        {"role": "assistant", "content": "It is src/config.ts."},
    ]
    assert [(r.kind, r.line) for r in report.records] == [("subagent_transcript", 1)]


def test_sidechain_lines_inside_a_main_session_are_still_left_out() -> None:
    main = {**cc_line("user", "Hello."), "isSidechain": False}
    out, _, report = read(jsonl([main, *SUBAGENT]))
    assert out == [{"role": "user", "content": "Hello."}]
    assert [r.kind for r in report.records] == ["drop_sidechain"] * 4


CODEX_LINES = [
    {"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cli_version": "0.77.0"}},
    {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                             "content": [{"type": "input_text", "text": "hi"}]}},
]


@pytest.mark.parametrize("fmt", ["claude-code", "responses"])
def test_a_file_in_which_nothing_is_recognised_is_an_error(fmt: str) -> None:
    with pytest.raises(InputError) as exc:
        read(jsonl(CODEX_LINES), fmt)
    assert str(exc.value) == (
        f"<stream>: no record of this file was recognised as {fmt}; it looks like codex. "
        "Read it with --from codex (in Python: format='codex')"
    )


def test_nothing_recognised_and_no_likely_format() -> None:
    with pytest.raises(InputError) as exc:
        read(jsonl([{"kind": "x"}, {"kind": "y"}]), "claude-code", on_invalid="skip")
    assert str(exc.value) == (
        "<stream>: no record of this file was recognised as claude-code, and it looks like none of the known "
        "formats. Name its format with --from (in Python: format=...): one of chat, responses, codex, "
        "claude-code, gemini-cli, opencode, anthropic, gemini, sharegpt, finetune"
    )


def test_an_empty_file_and_a_file_of_known_non_conversation_lines_are_empty_histories() -> None:
    assert read(b"")[:2] == ([], "chat")
    summary = {"type": "summary", "summary": "Fix the loader", "leafUuid": "u"}
    assert read(jsonl([summary]))[:2] == ([], "claude-code")


# -- 5. Cline: tool_use answered by user text ------------------------------------------------------

CLINE = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nFix a.py\n</task>"}], "ts": 1700000000000},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "src/a.py"}}],
     "ts": 1700000001000, "modelInfo": {"modelId": "claude-sonnet-4", "providerId": "anthropic"},
     "metrics": {"tokens": {"prompt": 10, "completion": 5}, "cost": 0.001}},
    {"role": "user", "content": [
        {"type": "text", "text": "[read_file for 'src/a.py'] Result:"},
        {"type": "text", "text": "print('hi')\n"},
        {"type": "text", "text": "<environment_details>\n# Current Time\n</environment_details>"}],
     "ts": 1700000002000},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_02", "name": "execute_command", "input": {"command": "pytest"}},
        {"type": "tool_use", "id": "toolu_03", "name": "write_to_file", "input": {"path": "b.py"}}],
     "ts": 1700000003000},
    {"role": "user", "content": [
        {"type": "text", "text": "[execute_command for 'pytest'] Result: 3 passed"},
        {"type": "text", "text": "Tool [write_to_file] was not executed because a tool has already been used in this "
                                 "message. Only one tool may be used per message."}],
     "ts": 1700000004000},
]


def test_cline_text_results_are_paired_with_their_calls() -> None:
    out, fmt, report = read(orjson.dumps(CLINE), kept=True)
    assert fmt == "anthropic"
    assert out == [
        {"role": "user", "content": "<task>\nFix a.py\n</task>", "source_fields": {"ts": 1700000000000}},
        {"role": "assistant", "content": "Reading it.", "tool_calls": [
            {"id": "toolu_01", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"src/a.py"}'}}],
         "source_fields": {"ts": 1700000001000, "modelInfo": CLINE[1]["modelInfo"], "metrics": CLINE[1]["metrics"]}},
        {"role": "tool", "tool_call_id": "toolu_01", "content": "print('hi')\n"},
        {"role": "user", "content": "<environment_details>\n# Current Time\n</environment_details>",
         "source_fields": {"ts": 1700000002000}},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "toolu_02", "type": "function", "function": {"name": "execute_command", "arguments": '{"command":"pytest"}'}},
            {"id": "toolu_03", "type": "function", "function": {"name": "write_to_file", "arguments": '{"path":"b.py"}'}}],
         "source_fields": {"ts": 1700000003000}},
        {"role": "tool", "tool_call_id": "toolu_02", "content": "3 passed", "source_fields": {"ts": 1700000004000}},
        {"role": "tool", "tool_call_id": "toolu_03", "content": CLINE[4]["content"][1]["text"]},
    ]
    assert records(report) == [
        ("pair_text_result", {"text": "[read_file for 'src/a.py'] Result:"}),
        ("pair_text_result", {"text": "[execute_command for 'pytest'] Result:"}),
        ("pair_text_result", None),
    ]
    again, repairs = repaired(out)
    assert again == out and repairs.records == []


def test_a_cline_header_for_a_call_that_is_not_open_stays_user_text() -> None:
    history = [CLINE[0], {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
               {"role": "user", "content": [{"type": "text", "text": "[read_file for 'x'] Result: y"}]}]
    out, _, report = read(orjson.dumps(history), "anthropic")
    assert out[2] == {"role": "user", "content": "[read_file for 'x'] Result: y"}
    assert report.records == []


# -- 6. newer Codex items; Claude Code server tools ------------------------------------------------


def rollout(*payloads: dict[str, Any]) -> bytes:
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "s", "cli_version": "0.130.0"}}
    return jsonl([meta, *({"timestamp": "t", "type": "response_item", "payload": p} for p in payloads)])


AGENT_MESSAGE = {"type": "agent_message", "author": "/root", "recipient": "/root/worker",
                 "content": [{"type": "input_text", "text": "Check the tests."}]}
ENCRYPTED_CALL = {"type": "function_call", "name": "spawn_agent", "namespace": "collaboration", "call_id": "call_s",
                  "encrypted_function_args": ["message"], "id": "fc_1"}
COMPACTION = {"type": "context_compaction", "encrypted_content": "gAAAA"}
SEALED = {"type": "agent_message", "author": "/root/worker", "recipient": "/root",
          "content": [{"type": "encrypted_content", "encrypted_content": "gAAB"}]}


def test_codex_agent_message_compaction_and_encrypted_arguments() -> None:
    out, fmt, report = read(rollout(
        AGENT_MESSAGE, ENCRYPTED_CALL, {"type": "function_call_output", "call_id": "call_s", "output": "spawned"},
        COMPACTION, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}],
                     "phase": "final_answer", "id": "msg_9"}, SEALED,
    ), kept=True)
    assert fmt == "codex"
    assert out == [
        {"role": "user", "content": "Check the tests.",
         "source_fields": {"type": "agent_message", "author": "/root", "recipient": "/root/worker"}},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_s", "type": "function", "function": {"name": "spawn_agent", "arguments": "{}"},
             "source_fields": {"namespace": "collaboration", "encrypted_function_args": ["message"], "id": "fc_1"}}]},
        {"role": "tool", "tool_call_id": "call_s", "content": "spawned"},
        {"role": "assistant", "content": "Done.", "source_fields": {"phase": "final_answer", "id": "msg_9"}},
    ]
    assert records(report) == [("missing_arguments", None), ("drop_context_compaction", COMPACTION),
                               ("drop_agent_message", SEALED)]
    assert report.records[0].detail == (
        "function_call 'call_s' has no 'arguments' (they are encrypted: see its encrypted_function_args); "
        "they became '{}'"
    )
    assert report.counts["agent_message_as_user"] == 1
    again, repairs = repaired(out)
    assert again == out and repairs.records == []


def test_codex_user_words_only_in_the_event() -> None:
    # Codex Desktop 0.128 as committed: no response_item user message, only the event.
    event = {"timestamp": "t", "type": "event_msg", "payload": {
        "type": "user_message", "message": "Summarise the transcript.", "images": [], "local_images": [],
        "text_elements": []}}
    said = {"timestamp": "t", "type": "response_item", "payload": {
        "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Summary."}]}}
    out, _, report = read(jsonl([event, said]), "codex")
    assert out == [{"role": "user", "content": "Summarise the transcript."}, {"role": "assistant", "content": "Summary."}]
    assert [(r.kind, r.line) for r in report.records] == [("user_from_event", 1)]
    # When a user item carries the words, the event is the UI's copy: skipped.
    item = {"timestamp": "t", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summarise the transcript."}]}}
    out, _, report = read(jsonl([item, event, said]), "codex")
    assert out == [{"role": "user", "content": "Summarise the transcript."}, {"role": "assistant", "content": "Summary."}]
    assert report.records == [] and report.counts == {"skip_event_msg": 1}


def claude_line(kind: str, content: Any, mid: str = "msg_1") -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = mid
    return {"type": kind, "uuid": "u", "sessionId": "s", "isSidechain": False, "message": message}


ADVICE = {"type": "advisor_result", "text": "Split the module first."}


def test_claude_code_server_tool_use_and_advisor_result_are_a_call_and_its_result() -> None:
    out, _, report = read(jsonl([
        claude_line("user", "Plan the refactor."),
        claude_line("assistant", [{"type": "text", "text": "Let me ask the advisor."}]),
        claude_line("assistant", [{"type": "server_tool_use", "id": "srvtoolu_01", "name": "advisor", "input": {}}]),
        claude_line("assistant", [{"type": "advisor_tool_result", "tool_use_id": "srvtoolu_01", "content": ADVICE}]),
        claude_line("user", "Go on."),
    ]), kept=True)
    assert out == [
        {"role": "user", "content": "Plan the refactor."},
        {"role": "assistant", "content": "Let me ask the advisor.", "tool_calls": [
            {"id": "srvtoolu_01", "type": "function", "function": {"name": "advisor", "arguments": "{}"},
             "source_fields": {"item_type": "server_tool_use"}}]},
        {"role": "tool", "tool_call_id": "srvtoolu_01", "content": "Split the module first.",
         "source_fields": {"type": "advisor_tool_result", "content": ADVICE}},
        {"role": "user", "content": "Go on."},
    ]
    assert report.records == []
    again, repairs = repaired(out)
    assert again == out and repairs.records == [] and check(out) == []


def test_an_advisor_result_in_a_user_line_is_a_tool_message_not_user_content() -> None:
    redacted = {"type": "advisor_redacted_result", "encrypted_content": "EqQB"}
    out, _, _ = read(jsonl([
        claude_line("assistant", [{"type": "server_tool_use", "id": "srvtoolu_02", "name": "advisor", "input": {}}]),
        claude_line("user", [{"type": "advisor_tool_result", "tool_use_id": "srvtoolu_02", "content": redacted},
                             {"type": "text", "text": "and?"}]),
    ]), "claude-code", kept=True)
    assert out[1:] == [
        {"role": "tool", "tool_call_id": "srvtoolu_02", "content": '{"type":"advisor_redacted_result","encrypted_content":"EqQB"}',
         "source_fields": {"type": "advisor_tool_result", "content": redacted}},
        {"role": "user", "content": "and?"},
    ]


# -- 7. source-format metadata: kept aside for the writer, never on the chat messages --------------

PHASED = [
    {"type": "message", "role": "user", "id": "msg_1", "content": [{"type": "input_text", "text": "hi"}]},
    {"type": "message", "role": "assistant", "id": "msg_2", "status": "completed", "phase": "final_answer",
     "provider_data": {"model": "gpt-5"}, "content": [{"type": "output_text", "text": "hello", "annotations": []}]},
    {"role": "user", "content": "bye"},
]


def test_item_fields_are_kept_aside_for_the_writer_not_on_the_chat() -> None:
    out, _, report = read(PHASED, "responses")
    assert out == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "bye"}]
    assert report.records == [] and check(out) == []
    out, _, report = read(PHASED, "responses", kept=True)
    assert out == [
        {"role": "user", "content": "hi", "source_fields": {"id": "msg_1"}},
        {"role": "assistant", "content": "hello",
         "source_fields": {"id": "msg_2", "status": "completed", "phase": "final_answer", "provider_data": {"model": "gpt-5"}}},
        {"role": "user", "content": "bye"},
    ]
    assert report.records == [] and check(out) == []


@pytest.mark.parametrize("profile", ["groq", "gemini", "mistral"])
def test_the_items_as_chat_hold_nothing_a_strict_provider_rejects(profile: str) -> None:
    # The items' own fields are not on the chat messages: nothing for fields.unknown to find
    # or remove (a chat history's own unknown keys are: test_unknown_call_fields_...).
    out, _, _ = read(PHASED, "responses")
    assert check(out, profile=profile) == []
    fixed, report = repaired(out, profile=profile)
    assert fixed == out and [r.kind for r in report.records if r.kind == "drop_unknown_fields"] == []


def test_unknown_call_fields_are_dropped_under_their_path() -> None:
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}", "strict": True},
                    "source_fields": {"id": "fc_1"}}]},
               {"role": "tool", "tool_call_id": "c", "content": "ok", "source_fields": {"is_error": False}}]
    fixed, report = repaired(history, profile="groq")
    assert fixed == [history[0],
                     {"role": "assistant", "content": "", "tool_calls": [
                         {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": "c", "content": "ok"}]
    assert [(r.kind, r.dropped) for r in report.records if r.kind == "drop_unknown_fields"] == [
        ("drop_unknown_fields", {"tool_calls.0.source_fields": {"id": "fc_1"}, "tool_calls.0.function.strict": True}),
        ("drop_unknown_fields", {"source_fields": {"is_error": False}}),
    ]


# -- 10.-13. Responses shapes from the peers' suites -----------------------------------------------


def test_10_a_function_call_part_in_an_assistant_message_is_its_call() -> None:
    items = [
        {"role": "user", "content": "weather?"},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Checking."},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city":"Oslo"}'}]},
        {"type": "function_call_output", "call_id": "c1", "output": "rain"},
    ]
    out, _, report = read(items, "responses")
    assert out == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "rain"},
    ]
    assert records(report) == [("lift_call_part", None)]
    assert repaired(out)[1].records == []


def test_11_reasoning_content_as_a_plain_string() -> None:
    reasoning = {"type": "reasoning", "summary": [], "content": "Think about Oslo."}
    out, _, _ = read([{"role": "user", "content": "weather?"}, reasoning,
                      {"type": "message", "role": "assistant", "content": "Rain."}], "responses")
    assert out[1] == {"role": "assistant", "content": "Rain.", "reasoning_content": "Think about Oslo.",
                      "reasoning_items": [reasoning]}


def test_12_calls_and_outputs_without_call_id_are_paired_by_the_core() -> None:
    items = [
        {"role": "user", "content": "two things"},
        {"type": "function_call", "name": "a", "arguments": "{}"},
        {"type": "function_call", "name": "b", "arguments": "{}"},
        {"type": "function_call_output", "output": "A"},
        {"type": "function_call_output", "output": "B"},
    ]
    out, _, report = read(items, "responses")
    assert report.records == []
    assert out[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"type": "function", "function": {"name": "b", "arguments": "{}"}}]}
    assert out[2:] == [{"role": "tool", "content": "A"}, {"role": "tool", "content": "B"}]
    fixed, repairs = repaired(out)
    assert fixed == [
        out[0],
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "a", "arguments": "{}"}, "id": "call_1_0"},
            {"type": "function", "function": {"name": "b", "arguments": "{}"}, "id": "call_1_1"}]},
        {"role": "tool", "content": "A", "tool_call_id": "call_1_0"},
        {"role": "tool", "content": "B", "tool_call_id": "call_1_1"},
    ]
    assert kinds(repairs) == ["assign_call_id", "assign_call_id", "assign_result_id", "assign_result_id"]


def test_13_bare_input_parts_are_one_user_message() -> None:
    items = [
        {"type": "input_text", "text": "What is in this picture?"},
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "low"},
        {"type": "message", "role": "assistant", "content": "A cat."},
        {"type": "input_text", "text": "Thanks."},
    ]
    out, fmt, report = read(items)
    assert fmt == "responses"
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"},
                                     {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}}]},
        {"role": "assistant", "content": "A cat."},
        {"role": "user", "content": "Thanks."},
    ]
    assert [(r.kind, r.detail) for r in report.records] == [
        ("group_input_parts", "2 bare input part item(s) (input_image, input_text) became one user message"),
        ("group_input_parts", "1 bare input part item(s) (input_text) became one user message"),
    ]


# -- 14. a calls-only fragment, then a text-only one ------------------------------------------------


def test_14_calls_then_text_of_one_speaker_are_one_turn_text_first() -> None:
    # Decided: consecutive assistant messages are one turn, whatever their order, so that a
    # result stored after the text still answers its call (pydantic-ai keeps two responses:
    # then the call would be stubbed and the real result dropped as an orphan). Chat has no
    # order between an assistant message's text and its calls; the record says they merged.
    history = [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "assistant", "content": "I could not check the weather."},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ]
    out, report = repaired(history)
    assert out == [
        history[0],
        {"role": "assistant", "content": "I could not check the weather.", "tool_calls": history[1]["tool_calls"]},
        history[3],
    ]
    assert [(r.kind, r.input) for r in report.records] == [("merge_assistant", [1, 2])]


# -- 15. Responses items and OpenAI SDK objects in memory ------------------------------------------

ITEMS = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}',
     "id": "fc_1", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "18C in Paris.", "annotations": []}]},
]
ITEMS_AS_CHAT = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
    {"role": "assistant", "content": "18C in Paris."},  # (the items' ids and statuses kept aside: no chat keys)
]


def test_15_read_messages_takes_responses_items_in_memory() -> None:
    stream = read_messages(ITEMS, "responses")
    assert list(stream) == ITEMS_AS_CHAT and stream.format == "responses" and stream.position is None
    assert list(read_messages(iter(ITEMS))) == ITEMS_AS_CHAT  # any iterable; the format detected
    assert list(normalizer.repair(read_messages(ITEMS, "responses"))) == ITEMS_AS_CHAT


def test_15_a_bad_item_in_memory_is_named_by_its_index() -> None:
    with pytest.raises(InputError) as exc:
        list(read_messages([ITEMS[0], {"type": "function_call", "call_id": 7}], "responses"))
    assert str(exc.value).startswith("<items>: message 1: a Responses 'function_call' item needs a string 'name'")


def test_15_openai_sdk_response_objects() -> None:
    responses = pytest.importorskip("openai.types.responses")
    objects = [
        ITEMS[0],
        responses.ResponseFunctionToolCall(type="function_call", call_id="call_1", name="get_weather",
                                           arguments='{"city":"Paris"}', id="fc_1", status="completed"),
        {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
        responses.ResponseOutputMessage(type="message", role="assistant", id="msg_1", status="completed", content=[
            responses.ResponseOutputText(type="output_text", text="18C in Paris.", annotations=[])]),
    ]
    assert list(read_messages(objects, "responses")) == ITEMS_AS_CHAT
    assert list(read_messages(objects)) == ITEMS_AS_CHAT


@pytest.mark.anyio
async def test_15_aread_messages_takes_async_and_sync_iterables() -> None:
    from normalizer.formats import aread_messages

    async def items() -> Any:
        for item in ITEMS:
            yield item

    assert [m async for m in aread_messages(items(), "responses")] == ITEMS_AS_CHAT
    assert [m async for m in aread_messages(ITEMS)] == ITEMS_AS_CHAT
