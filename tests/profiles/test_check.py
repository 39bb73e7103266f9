"""Check mode: for every rule of the catalogue, a minimal violating history that check
flags with the provider's exact text, and its repaired form; plus the Checker's contract."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import anyio
import pytest

import normalizer
from normalizer.profiles._check import Checker, Violation, acheck_iter, check, check_iter
from normalizer.profiles import RULES
from normalizer._errors import UsageError
from normalizer.profiles._profiles import PROFILES, Profile

Msg = dict[str, Any]


def U(text: str = "hi", **kw: Any) -> Msg:
    return {"role": "user", "content": text, **kw}


def S(text: str = "be brief") -> Msg:
    return {"role": "system", "content": text}


def A(content: Any = None, calls: list[Msg] | None = None, **kw: Any) -> Msg:
    msg: Msg = {"role": "assistant", "content": content, **kw}
    if calls is not None:
        msg["tool_calls"] = calls
    return msg


def C(id: str = "call_1", name: str = "f", args: Any = "{}") -> Msg:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def T(id: str | None = "call_1", content: Any = "r", **kw: Any) -> Msg:
    msg: Msg = {"role": "tool", "content": content, **kw}
    if id is not None:
        msg["tool_call_id"] = id
    return msg


def derive(base: str, name: str, **changes: Any) -> Profile:
    return PROFILES[base].derive(name, **changes)


ID9 = "abcdefghi"
IMAGE = {"type": "image_url", "image_url": {"url": "http://x/a.png"}}
LONG = "call_" + "x" * 40  # 45 characters
Fixed = Callable[[list[Msg]], bool]


def _has(role: str, pred: Callable[[Msg], bool]) -> Fixed:
    return lambda out: any(m["role"] == role and pred(m) for m in out)


# rule id -> (profile, violating history, the provider's text, what the repair shows)
CASES: dict[str, tuple[Any, list[Msg], str, Fixed]] = {
    "OA-1": ("openai", [U(), A(None, [C()]), U("next")],
             "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
             "'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
             lambda out: [m["role"] for m in out] == ["user", "assistant", "tool", "user"]),
    "OA-2": ("openai", [U(), T("call_9")],
             "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
             lambda out: out == [U()]),
    "OA-3": ("openai", [U(), A(None, [C()]), T(), T(content="again")],
             "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_1' in messages[2] and messages[3].",
             lambda out: len(out) == 3),
    "OA-4": ("openai", [U(), A("x", [])],
             "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an "
             "empty array instead.",
             lambda out: "tool_calls" not in out[1]),
    "OA-5": ("openai", [U(), A(None, [C(LONG)]), T(LONG)],
             "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, "
             "but got a string with length 45 instead.",
             lambda out: len(out[1]["tool_calls"][0]["id"]) <= 40 and out[2]["tool_call_id"] == out[1]["tool_calls"][0]["id"]),
    "OA-6a": ("openai", [U(None)], "Invalid value for 'content': expected a string, got null.",
              lambda out: out == [U("")]),
    "OA-6c": ("openai", [U(name="Ada Lovelace")],
              "Invalid 'messages[0].name': string does not match pattern. Expected a string that matches the "
              "pattern '^[a-zA-Z0-9_-]+$'.",
              lambda out: out[0]["name"] == "Ada_Lovelace"),
    "OA-6d": ("openai", [U([{"text": "hi"}])], "Missing required parameter: 'messages[0].content[0].type'.",
              lambda out: out[0]["content"] == [{"text": "hi", "type": "text"}]),
    "OA-7": ("openai", [U(), A(None, [C()]), T(content=[{"type": "text", "text": "shot"},
                                                       {"type": "image_url", "image_url": {"url": "u"}}])],
             "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but this message "
             "with role 'tool' contains an image URL.",
             lambda out: out[2]["content"] == "shot\n[image_url omitted: only text can be sent here]"),
    "OA-8": (derive("default", "o1-mini", system="fold", add_rules=["OA-8"]), [S("sys"), U()],
             "Unsupported value: 'messages[0].role' does not support 'system' with this model.",
             lambda out: out == [U("sys\nhi")]),
    "RX-7": (derive("default", "responses", id_style="responses64", add_rules=["RX-7"]),
             [U(), A(None, [C("c" * 70)]), T("c" * 70)],
             "Invalid 'input[1].call_id': string too long. Expected a string with maximum length 64, but got a "
             "string with length 70 instead.",
             lambda out: len(out[1]["tool_calls"][0]["id"]) <= 64),
    "DS-1": ("deepseek", [U(), A(None, [C()])],
             "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
             "'tool_call_id'. (insufficient tool messages following tool_calls message)",
             lambda out: out[-1]["role"] == "tool"),
    "DS-2": ("deepseek", [U(), T("x")],
             "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
             lambda out: out == [U()]),
    "DS-3a": (derive("deepseek", "deepseek-v3.2", remove_rules=["DS-3b"], add_rules=["DS-3a"]),
              [U(), A(None, [C()]), T()],
              "Missing `reasoning_content` field in the assistant message at message index 1. For more "
              "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
              lambda out: out[1]["reasoning_content"] == ""),
    "DS-3b": ("deepseek", [U(), A(None, [C()]), T()],
              "The `reasoning_content` in the thinking mode must be passed back to the API.",
              lambda out: out[1]["reasoning_content"] == ""),
    "DS-4a": (derive("default", "deepseek-r1", system="leading", add_rules=["DS-4a"]), [U("a"), U("b", name="x")],
              "deepseek-reasoner does not support successive user or assistant messages (messages[0] and "
              "messages[1] in your input). You should interleave the user/assistant messages in the message sequence.",
              lambda out: out == [U("a\nb")]),
    "DS-4b": (derive("default", "deepseek-r1b", add_rules=["DS-4b"]), [A("hello")],
              "The first message (except the system message) of deepseek-reasoner must be a user message, but an "
              "assistant message detected.",
              lambda out: out[0] == U(".")),
    "DS-5b": ("deepseek", [U(), A(None, [C()]), T(content=[{"type": "text", "text": "r"}])],
              "Failed to deserialize the JSON body into the target type: messages[2]: invalid type: sequence, "
              "expected a string at line 1 column {c}",
              lambda out: out[2]["content"] == "r"),
    "MS-1": ("moonshot", [U(), A(None, [C()]), U("next")],
             "an assistant message with 'tool_calls' must be followed by tool messages responding to each "
             "'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
             lambda out: out[2]["role"] == "tool"),
    "MS-2": ("moonshot", [U(), A(None, [C()]), T()],
             "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
             lambda out: out[1]["reasoning_content"] == ""),
    "MS-3": ("moonshot", [U(), A("", [C()]), T()],
             "Invalid request: the message at position 1 with role 'assistant' must not be empty",
             lambda out: out[1]["content"] is None),
    "MS-4": ("moonshot", [U(), A([{"type": "text", "text": ""}, {"type": "text", "text": "ok"}])],
             "Invalid request: text content is empty",
             lambda out: out[1]["content"] == "ok"),
    "AN-1": ("anthropic", [S(), U(), A(None, [C()]), U("next")],
             "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: call_1. Each "
             "`tool_use` block must have a corresponding `tool_result` block in the next message.",
             lambda out: out[3]["role"] == "tool"),
    "AN-3": ("anthropic", [U(), T("x")],
             "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: x. Each `tool_result` "
             "block must have a corresponding `tool_use` block in the previous message.",
             lambda out: out == [U()]),
    "AN-4": ("anthropic", [U(), A(None, [C()]), T(), A(None, [C()]), T(), U("ok")],
             "messages.3.content.0: `tool_use` ids must be unique",
             lambda out: out[1]["tool_calls"][0]["id"] != out[3]["tool_calls"][0]["id"]),
    "AN-5": ("anthropic", [U(), A(None, [C("functions.get:0")]), T("functions.get:0"), U("ok")],
             "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
             lambda out: out[1]["tool_calls"][0]["id"] == out[2]["tool_call_id"] == "functions_get_0_0"),
    "AN-7a": ("anthropic", [U([{"type": "text", "text": ""}, {"type": "text", "text": "hi"}])],
              "messages: text content blocks must be non-empty",
              lambda out: out[0]["content"] == [{"type": "text", "text": "hi"}]),
    "AN-7b": ("anthropic", [U([{"type": "text", "text": "  "}, {"type": "text", "text": "hi"}])],
              "messages: text content blocks must contain non-whitespace text",
              lambda out: out[0]["content"] == [{"type": "text", "text": "hi"}]),
    "AN-8": ("anthropic", [U("")],
             "messages.0: all messages must have non-empty content except for the optional final assistant message",
             lambda out: out == [U(".")]),
    "AN-9": ("anthropic", [U(), A("ok ")], "messages: final assistant content cannot end with trailing whitespace",
             lambda out: out[-1] == U("Continue.")),
    "AN-10a": ("anthropic", [U("a"), U("b", name="bob")],
               'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
               lambda out: out == [U("a\nb")]),
    "AN-10b": (derive("anthropic", "anthropic-legacy", add_rules=["AN-10b"]), [A("hello"), U()],
               'messages: first message must use the "user" role',
               lambda out: out[0] == U(".")),
    "AN-11": ("anthropic", [U(), A("hello")],
              "This model does not support assistant message prefill. The conversation must end with a user message.",
              lambda out: out[-1] == U("Continue.")),
    "AN-12": ("anthropic", [U(), A("x"), S("mid"), U("y")],
              'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not '
              '"system" as an input message role.',
              lambda out: out[-1] == U("mid\ny")),
    "BR-1": ("bedrock", [U("a"), U("b", name="bob")],
             "A conversation must alternate between user and assistant roles. Make sure the conversation alternates "
             "between user and assistant roles and try again.",
             lambda out: out == [U("a\nb")]),
    "BR-2": ("bedrock", [A("hello"), U()],
             "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
             lambda out: out[0] == U(".")),
    "BR-3": ("bedrock", [U(), A(None, [C()]), T(), T(content="again")],
             "The number of toolResult blocks at messages.3.content exceeds the number of toolUse blocks of previous turn.",
             lambda out: [m["role"] for m in out] == ["user", "assistant", "tool"]),
    "BR-5": ("bedrock", [U([{"type": "text", "text": ""}, {"type": "text", "text": "x"}])],
             "The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, "
             "and try again.",
             lambda out: out[0]["content"] == [{"type": "text", "text": "x"}]),
    "BR-8": (derive("openai", "bedrock-openai", add_rules=["BR-8"]), [U(), A("", [C()]), T()],
             "messages: text content blocks must be non-empty",
             lambda out: out[1]["content"] is None),
    "GM-1": ("gemini", [U(), T("x")],
             "Please ensure that function response turn comes immediately after a function call turn.",
             lambda out: out == [U()]),
    "GM-2": ("gemini", [A(None, [C()]), T()],
             "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
             lambda out: out[0] == U(".")),
    "GM-3": ("gemini", [U(), A(None, [C()])],
             "Please ensure that the number of function response parts is equal to the number of function call parts "
             "of the function call turn.",
             lambda out: out[2]["role"] == "tool"),
    "GM-4": ("gemini", [U(), A("a"), A("b")], "Please ensure that multiturn requests alternate between user and model.",
             lambda out: out[1] == A("a\nb")),
    "GM-5": ("gemini", [U(), A("x")], "Requests ending with a model turn are not supported.",
             lambda out: out[-1] == U("Continue.")),
    "GM-6a": ("gemini", [U("")], "* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.",
              lambda out: out == [U(".")]),
    "GM-6b": ("gemini", [S()], "* GenerateContentRequest.contents: contents is not specified",
              lambda out: out == [S(), U(".")]),
    "GM-7": ("gemini", [U(), A(None, [C(name="get")]), T()],
             "* GenerateContentRequest.contents[2].parts[0].function_response.name: Name cannot be empty.",
             lambda out: out[2]["name"] == "get"),
    "GM-9": ("gemini", [U(source_fields={"id": "msg_1"}), A("ok")],
             'Invalid JSON payload received. Unknown name "source_fields": Cannot find field.',
             lambda out: out[:2] == [U(), A("ok")]),
    "GM-10": ("gemini", [U(), A(None, [C(args='{"city": "Mex')]), T()],
              "Unable to convert openai tool calls={message} to gemini tool calls. Received error={error}",
              lambda out: out[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Mex"}'),
    "GM-11": ("gemini", [U([{"text": "hi"}])], "KeyError: 'type'",
              lambda out: out == [U([{"text": "hi", "type": "text"}])]),
    "MI-1": ("mistral", [U(), A(None, [C(ID9)]), T(ID9), U("next")], "Unexpected role 'user' after role 'tool'",
             lambda out: [m["role"] for m in out] == ["user", "assistant", "tool", "assistant", "user"]
             and out[3]["content"] == "Understood."),
    "MI-2": ("mistral", [U(), A("x")],
             "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
             lambda out: out[-1] == A("x", prefix=True)),
    "MI-3": ("mistral", [U(), A(None, [C(ID9)])], "Not the same number of function calls and responses",
             lambda out: out[-1]["role"] == "tool"),
    "MI-4": ("mistral", [U(), A(None, [C()]), T()],
             "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.",
             lambda out: len(out[1]["tool_calls"][0]["id"]) == 9 and out[2]["tool_call_id"] == out[1]["tool_calls"][0]["id"]),
    "MI-5": ("mistral", [U(), A("let me look", [C(ID9)]), T(ID9)],
             "Assistant message must have either content or tool_calls, but not both.",
             lambda out: out[1] == A("let me look") and out[2]["content"] is None and out[2]["tool_calls"]),
    "MI-6a": ("mistral", [U(), A(None, [C(ID9)]), T(ID9), A(None, [C(ID9)]), T(ID9)],
              "Duplicate tool call id abcdefghi in assistant message",
              lambda out: out[1]["tool_calls"][0]["id"] != out[3]["tool_calls"][0]["id"]),
    "MI-7": ("mistral", [A("hello")], "Conversation must start with a user message or system message",
             lambda out: out == [U("."), A("hello", prefix=True)]),
    "MI-8": ("mistral", [U([{"text": "hi"}, IMAGE])], "Content chunk must have a type field.",
             lambda out: out == [U([{"text": "hi", "type": "text"}, IMAGE])]),
    "MI-9": ("mistral", [U(), A([{"type": "text", "text": "see"}, IMAGE]), U("ok")],
             "Unexpected content chunk types in assistant message",
             lambda out: out == [U(), A("see\n[image_url omitted: only text can be sent here]"), U("ok")]),
    "MI-13": ("mistral", [U(), A(None, [C(ID9)]), T(ID9, [IMAGE])], "Unexpected content chunk types in tool message",
              lambda out: out[2] == T("P5gRZ3YvF", "[image_url omitted: only text can be sent here]")),
    "MI-10": ("mistral", [U(None)], "2 validation errors for UserMessage content.str Input should be a valid string",
              lambda out: out == [U("")]),
    "MI-11": ("mistral", [U(), A("x", reasoning_content="hmm"), U("y")],
              "Unexpected content chunk types in assistant message: ['ThinkChunk']",
              lambda out: out == [U(), A("x"), U("y")]),
    "MI-12": ("mistral-v3", [U(), A("let me look"), A(None, [C(ID9)]), T(ID9)],
              "Cannot have tool calls and content defined in the same assistant message",
              lambda out: out == [U(), A(None, [C("P5gRZ3YvF")]), T("P5gRZ3YvF")]),
    "JT-4": ("llama3", [U(), A(None, [C("a"), C("b", name="g")]), T("a", "ra"), T("b", "rb")],
             "This model only supports single tool-calls at once!",
             lambda out: out == [U(), A("", [C("a")]), T("a", "ra"), A("", [C("b", name="g")]), T("b", "rb")]),
    "JT-6": ("jinja-strict", [U([{"type": "text", "text": "see"}, IMAGE])],
             'can only concatenate str (not "list") to str',
             lambda out: out == [U("see\n[image_url omitted: only text can be sent here]")]),
    "JT-7": ("jinja-strict", [U(None)], 'can only concatenate str (not "NoneType") to str',
             lambda out: out == [U("")]),
    "JT-8": ("jinja-strict", [S()], "No user query found in messages.", lambda out: out == [S(), U(".")]),
    "JT-9": ("mistral-template", [U(), A(None, [C()]), T()],
             "Tool call IDs should be alphanumeric strings with length 9!",
             lambda out: out == [U(), A("", [C("P5gRZ3YvF")]), T("P5gRZ3YvF")]),
    "JT-10": ("jinja-strict", [{"role": "developer", "content": "be brief"}, U()], "Unexpected message role.",
              lambda out: out == [S(), U()]),
    "JT-11": ("mistral-template", [U(), A(None, [C(ID9)]), T(ID9), U("next")],
              "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...",
              lambda out: out == [U(), A("", [C("P5gRZ3YvF")]), T("P5gRZ3YvF"), A("Understood."), U("next")]),
    "JT-12": ("qwen3.5", [U(), A(None, [C(args='{"path": "a.py", "text": "def f(')]), T()],
              "TypeError: Can only get item pairs from a mapping.",
              lambda out: out == [U(), A("", [C(args={"path": "a.py", "text": "def f("})]), T()]),
    "JT-13": ("hermes", [U(), A("Let me look.", [C()]), T()],
              "(no error: the text of an assistant message with tool calls is left out of the prompt)",
              lambda out: out == [U(), A("Let me look."), A("", [C()]), T()]),
    "JT-15": ("qwen3.5", [S(), U("hi", tool_calls=[C()])],
              "(no error: the tool_calls of a user message are left out of the prompt)",
              lambda out: out == [S(), U("hi")]),
    "GM-12": ("gemini", [U(), A(None, [C("a"), C("b")]), T("a", "ra"), T("b", "rb")],
              "Please ensure that the number of function response parts is equal to the number of function call "
              "parts of the function call turn.",
              lambda out: out == [U(), A(None, [C("a")]), T("a", "ra", name="f"), A(None, [C("b")]),
                                  T("b", "rb", name="f")]),
    "GM-13": ("gemini", [{"role": "developer", "content": "be brief"}, U()],
              "Invalid Message passed in - {'role': 'developer', ...}",
              lambda out: out == [S(), U()]),
    "JT-14": ("llama3", [A("hello"), U()],
              "Cannot put tools in the first user message when there's no first user message!",
              lambda out: out == [U("."), A("hello"), U()]),
    "AN-13": ("anthropic", [{"role": "developer", "content": "be brief"}, U()],
              "Invalid Message passed in {'role': 'developer', ...}",
              lambda out: out == [S(), U()]),
    "AN-14": ("anthropic", [U(), A(None, [C("toolu_01A", args='{"q": [1, 2')]), T("toolu_01A")],
              "Failed to parse tool call arguments for tool 'f' (Anthropic tool invoke).",
              lambda out: out == [U(), A(None, [C("toolu_01A", args='{"q": [1, 2]}')]), T("toolu_01A")]),
    "AN-15": ("anthropic", [S()], "Anthropic requires at least one non-system message.",
              lambda out: out == [S(), U(".")]),
    "AN-16": ("anthropic", [U([{"text": "hi"}])], "KeyError: 'type'",
              lambda out: out == [U([{"text": "hi", "type": "text"}])]),
    "BR-6": ("bedrock", [S()], "bedrock requires at least one non-system message",
             lambda out: out == [S(), U(".")]),
    "MI-14": ("mistral", [U(), A("ok", phase="final_answer"), U("more")],
             "phase: Extra inputs are not permitted",
             lambda out: out[1] == A("ok")),
    "MI-15": ("mistral", [{"role": "developer", "content": "be brief"}, U()],
             "Input tag 'developer' found using 'role' does not match any of the expected tags: "
             "<Roles.system: 'system'>, <Roles.user: 'user'>, <Roles.assistant: 'assistant'>, <Roles.tool: 'tool'>",
             lambda out: out == [S(), U()]),
    "GQ-1": ("groq", [U(), A("x", reasoning_content="hmm"), U("y")],
             "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property "
             "'reasoning_content' is unsupported)]",
             lambda out: "reasoning_content" not in out[1]),
    "GQ-2": ("groq", [U(), A(None, [C()]), T(None)],
             "'messages.2' : for 'role:tool' the following must be satisfied[('messages.2.tool_call_id' : property "
             "'tool_call_id' is missing)]",
             lambda out: out[2]["tool_call_id"] == "call_1"),
    "GQ-3": ("groq", [U(), A(None, [C()]), T(content=[{"type": "text", "text": "r"}])],
             "'messages.2' : for 'role:tool' the following must be satisfied[('messages.2.content' : value must be "
             "a string)]",
             lambda out: out[2]["content"] == "r"),
    "GQ-4": ("groq", [U(tool_calls=[C()])],
             "'messages.0' : for 'role:user' the following must be satisfied[('messages.0' : property 'tool_calls' "
             "is unsupported, did you mean 'tool_call_id'?)]",
             lambda out: out == [U()]),
    "GQ-5": ("groq", [U(), A(None, [{**C(), "status": "completed"}]), T(is_error=True)],
             "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1' : property "
             "'tool_calls.0.status' is unsupported)]",
             lambda out: out[1]["tool_calls"] == [C()] and out[2] == T()),
    "XA-1": ("xai", [U(), A(None, [C()]), T()],
             "Invalid request content: Each message must have at least one content element.",
             lambda out: out[1]["content"] == ""),
    "XA-2": ("xai", [U([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])],
             "The model expects a single `text` element per message.",
             lambda out: out == [U("a\nb")]),
    "XA-3": ("xai", [U(), A(None, [C(args="")]), T()],
             "The arguments to a tool_call with ID 'call_1' are not a valid JSON string. Parsing error: "
             'Error("EOF while parsing a value", line: 1, column: 0)',
             lambda out: out[1]["tool_calls"][0]["function"]["arguments"] == "{}"),
    "QW-1": ("qwen", [U(), A(None, [C()])],
             '<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed by '
             'tool messages responding to each "tool_call_id". The following tool_call_ids did not have response '
             "messages: message[1].role",
             lambda out: out[-1]["role"] == "tool"),
    "QW-2": ("qwen", [U(), T("x")],
             '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a '
             'preceeding message with "tool_calls".',
             lambda out: out == [U()]),
    "QW-3": ("qwen", [S(), A("x")],
             "<400> InternalError.Algo.InvalidParameter: The input messages do not contain elements with the role of user",
             lambda out: out == [S(), A("x"), U("Continue.")]),
    "ZP-1": ("zhipu", [S(), A("x")], '{"code":"1214","message":"messages 参数非法。请检查文档。"}',
             lambda out: out[-1] == U("Continue.")),
    "ZP-2": ("zhipu", [U([{"text": "hi"}])],
             "request param validation error, Value error, message[0].content[0] has invalid field(s): text",
             lambda out: out[0]["content"] == [{"text": "hi", "type": "text"}]),
    "ZP-3": ("zhipu:thinking", [U(), A(None, [C()]), T()],
             "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
             lambda out: out[1]["reasoning_content"] == ""),
    "JT-1": ("jinja-strict", [A("hello"), U()], "Conversation roles must alternate user/assistant/user/assistant/...",
             lambda out: out[0] == U(".")),
    "JT-2": (derive("jinja-strict", "gemma", system="fold", remove_rules=["JT-3"], add_rules=["JT-2"]),
             [S("sys"), U()], "System role not supported",
             lambda out: out == [U("sys\nhi")]),
    "JT-3": ("jinja-strict", [S("a"), S("b"), U()], "System message must be at the beginning.",
             lambda out: out == [S("a\nb"), U()]),
    "JT-5a": (derive("ollama", "template-direct", remove_rules=["JT-5b"], add_rules=["JT-5a"]),
              [U(), A(None, [C(args='{"a": 1}')]), T()],
              "TypeError: Can only get item pairs from a mapping.",
              lambda out: out[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}),
    "JT-5b": ("ollama", [U(), A(None, [C(args='{"a": 1}')]), T()],
              "json: cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments "
              "of type api.ToolCallFunctionArguments",
              lambda out: out[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}),
    "OL-3": ("ollama", [U(), A(None, [C(args='{"a": [1')]), T()],
             "json: cannot unmarshal string into Go struct field ChatRequest.messages.tool_calls.function.arguments "
             "of type api.ToolCallFunctionArguments",
             lambda out: out == [U(), A("", [C(args={"a": [1]})]), T()]),
    "OL-1": ("ollama", [U([{"type": "text", "text": "hi"}])],
             "json: cannot unmarshal array into Go struct field ChatRequest.messages.content of type string",
             lambda out: out == [U("hi")]),
    "OL-2": (derive("ollama", "ollama-openai", arguments="string", rules=["OL-2"]), [U(), A(None, [C()]), T()],
             "invalid message content type: <nil>",
             lambda out: out[1]["content"] == ""),
}


def test_every_rule_has_a_case() -> None:
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("rule", list(CASES))
def test_rule_is_flagged_with_the_providers_text_and_repaired(rule: str) -> None:
    profile, history, text, fixed = CASES[rule]
    original = copy.deepcopy(history)
    found = check(history, profile=profile)
    assert history == original, "check changes nothing"
    mine = [v for v in found if v.rule == rule]
    assert [v.message for v in mine][:1] == [text], found
    assert mine[0].source == RULES[rule].source and mine[0].severity == RULES[rule].severity
    out = list(normalizer.repair(history, profile=profile))
    assert check(out, profile=profile) == []
    assert fixed(out), out


@pytest.mark.parametrize("name", list(PROFILES))
def test_every_builtin_rule_is_reachable(name: str) -> None:
    # every rule a built-in profile lists has a case (above) under some profile
    assert set(PROFILES[name].rules) <= set(CASES)


# -- the Checker


def test_checker_reports_as_it_goes() -> None:
    checker = Checker("openai")
    assert checker.feed(U()) == []
    assert checker.feed(A(None, [C()])) == []  # not known yet: its results may follow
    late = checker.feed(U("next"))
    assert [v.rule for v in late] == ["OA-1"] and late[0].index == 1
    assert checker.close() == [] and checker.close() == []
    with pytest.raises(UsageError):
        checker.feed(U())


def test_check_iter_is_lazy() -> None:
    seen: list[int] = []

    def source() -> Any:
        for i, m in enumerate([U(), T("x"), U(), T("y")]):
            seen.append(i)
            yield m

    it = check_iter(source(), profile="openai")
    first = next(it)
    assert first.rule == "OA-2" and first.index == 1 and seen == [0, 1]
    assert [v.index for v in it] == [3]


def test_acheck_iter() -> None:
    async def main() -> list[Violation]:
        async def source() -> Any:
            for m in [A("x"), U()]:
                yield m

        return [v async for v in acheck_iter(source(), profile="bedrock")]

    assert [v.rule for v in anyio.run(main)] == ["BR-2"]


def test_not_a_message() -> None:
    found = check([U(), 42, {"role": "robot"}])
    assert [(v.index, v.rule) for v in found] == [(1, "shape"), (2, "shape")]


def test_pydantic_messages_are_read() -> None:
    from pydantic import BaseModel

    class M(BaseModel):
        role: str
        content: str | None = None

    assert [v.rule for v in check([M(role="user", content=None)], profile="openai")] == ["OA-6a"]


def test_seen_ids_are_bounded() -> None:
    history: list[Msg] = [U()]
    for k in range(20):
        history += [A(None, [C(f"id{k:07d}x")]), T(f"id{k:07d}x")]
    checker = Checker("mistral", max_seen_ids=5)
    for m in history:
        checker.feed(m)
    checker.close()
    assert checker.incomplete and len(checker.seen_ids) == 5


def test_a_check_past_max_seen_ids_says_it_is_incomplete() -> None:
    # zhipu checks ids across turns (ZP-1): 6 distinct ids, then a reuse of the sixth, which
    # was not remembered. Before: "no violations" and only an attribute knew.
    history: list[Msg] = [U()]
    for k in [0, 1, 2, 3, 4, 5, 5]:
        history += [A(None, [C(f"id{k}")]), T(f"id{k}")]
    checker = Checker("zhipu", max_seen_ids=5)
    assert checker.incomplete_reason is None
    assert [v for m in history for v in checker.feed(m)] == []
    (notice,) = checker.close()
    reason = ("more than 5 distinct call ids: ids first seen after that were not remembered, so a reuse of one "
              "of them across turns (tool.duplicate_call_id) is not reported; raise max_seen_ids to check them")
    assert checker.incomplete and checker.incomplete_reason == reason
    assert notice == Violation(index=None, rule="incomplete", key="incomplete", source="normalizer",
                               severity="warning", message=f"the check is incomplete: {reason}")
    assert check(history, profile="zhipu", max_seen_ids=5) == [notice]
    # Within the limit the reuse is found and there is no notice.
    assert [(v.rule, v.key, v.index) for v in check(history, profile="zhipu", max_seen_ids=6)] == [
        ("ZP-1", "tool.duplicate_call_id", 13)]


def test_native_index_skips_system_messages() -> None:
    found = check([S(), S(), U(""), A("x")], profile="anthropic")
    assert found[0].message.startswith("messages.0:") and found[0].index == 2


def test_warning_severity_for_the_unsure_openai_id_limit() -> None:
    found = check([U(), A(None, [C(LONG)]), T(LONG)], profile="openai")
    assert [(v.rule, v.severity) for v in found] == [("OA-5", "warning")]


def test_opaque_messages_are_exempt_from_content_and_id_rules() -> None:
    opaque = A(None, [C("not valid for mistral")], codex_reasoning_items=[{"id": "rs_1"}])
    found = check([U(), opaque, T("not valid for mistral")], profile="strict")
    assert [v.rule for v in found if v.index == 1] == []


@pytest.mark.parametrize("profile", ["openai", "strict"])
def test_an_opaque_turns_name_is_exempt_as_repair_leaves_it(profile: str) -> None:
    # Found by the named-speaker property tests: an opaque turn is replayed as stored, its
    # name too (not sanitized), so check must not flag it (OA-6c) or check(repair(x)) != [].
    history = [U(), A("partial", name="bad name!", finish_reason="incomplete"), U("go on")]
    out = list(normalizer.repair(history, profile=profile))
    assert out[1] == history[1]
    assert check(out, profile=profile) == []
    assert [v.rule for v in check([U(), A("done", name="bad name!"), U()], profile=profile)] == ["OA-6c"]


def test_a_profile_that_drops_opaque_state_checks_and_repairs_the_turn() -> None:
    # mistral (opaque="plain"): the state means nothing there; the turn is an ordinary one.
    opaque = A(None, [C("not valid for mistral")], codex_reasoning_items=[{"id": "rs_1"}])
    history = [U(), opaque, T("not valid for mistral")]
    # (its state is also a field Mistral does not know: MI-14)
    assert [v.rule for v in check(history, profile="mistral") if v.index == 1] == ["MI-14", "MI-4"]
    stream = normalizer.repair(history, profile="mistral")
    assert list(stream) == [U(), A(None, [C("P5gRZ3YvF")]), T("P5gRZ3YvF")]
    assert [r.dropped for r in stream.report.records if r.kind == "drop_opaque_state"] == [
        {"codex_reasoning_items": [{"id": "rs_1"}]}]


def test_opaque_turns_are_exempt_from_the_rules_about_their_own_fields() -> None:
    # Replayed exactly as stored: no empty-tool_calls, reasoning-required or reasoning-unsupported violation.
    # (an empty call list is not state: OA-4 applies to an opaque turn too)
    assert [v.rule for v in check([U(), A("partial", [], finish_reason="incomplete"), U("go on")])] == ["OA-4"]
    bare = A(None, [C()], finish_reason="incomplete")
    assert check([U(), bare, T(), U("go on")], profile="deepseek") == []
    assert check([U(), A("partial", reasoning_content="r", finish_reason="incomplete"), U()], profile="groq") == []
    # ... but its results are still checked, and the same turn without the state is not exempt
    assert [v.rule for v in check([U(), A(None, [C()], codex_message_items=[1]), T()], profile="strict")] == ["GM-7"]
    # (gemini drops the state, which means nothing to Gemini: its field is one Gemini does not know)
    assert [v.rule for v in check([U(), A(None, [C()], codex_message_items=[1]), T()], profile="gemini")] == [
        "GM-9", "GM-7"]
    assert [v.rule for v in check([U(), A("partial", []), U()])] == ["OA-4"]


def test_a_part_is_text_by_its_type_or_its_text_key() -> None:
    image = {"image_url": {"url": "u"}}  # no type: an image, as the core counts it
    assert check([U([{"text": "a"}, image])], profile="xai") == []
    assert [v.rule for v in check([U([{"text": "a"}, "b", image])], profile="xai")] == ["XA-2"]
    assert [v.rule for v in check([U([{"text": "a"}, image])], profile="moonshot")] == []


def test_docstring_examples() -> None:
    import doctest

    import normalizer.profiles._check

    assert doctest.testmod(normalizer.profiles._check).failed == 0
