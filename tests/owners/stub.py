"""A stub of the Anthropic Messages API, the OpenAI Responses API and Gemini's
``generateContent`` on 127.0.0.1.

The owners (Claude Code, Codex, Gemini CLI) resume a session offline against it. Every request body is
recorded; a model request is judged by the provider's own pairing rules and answered, when
it breaks one, with the provider's 400 error, its text as the provider writes it
(``/work/shared/research/providers.md``: AN-1, AN-2, AN-3, AN-4, AN-7, AN-8; RX-1, RX-2;
GM-1, GM-2, GM-3, GM-4, GM-6);
otherwise with a short valid SSE stream (a new ``msg_`` id for every Claude Code reply: a
constant one makes Claude Code merge the replies). Codex's WebSocket upgrade gets 426, so
that it falls back to HTTPS at once. Only the standard library: ``http.server`` in a thread.

The rules are plain functions (:func:`anthropic_violation`, :func:`responses_violation`,
:func:`gemini_violation`), so
that a test judges a recorded request by exactly what the stub answered it with.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: The Responses API's call items and the output item that answers each.
RESPONSES_CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
                   "local_shell_call": "local_shell_call_output"}
RESPONSES_OUTPUTS = set(RESPONSES_CALLS.values())


def _blocks(content: Any) -> list[Any]:
    """A message's content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def merged_messages(messages: list[Any]) -> list[tuple[str, list[Any]]]:
    """``messages`` as Anthropic sees them: consecutive turns of one role combined into one
    (the API has done so since it stopped rejecting them, see providers.md AN-10). A message
    of another role is left out: Claude Code 2.1.332 sends ``{"role": "system", "content": [],
    "output_config": ...}`` among the turns to carry a setting, not a turn of the history."""
    merged: list[tuple[str, list[Any]]] = []
    for message in messages:
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            continue
        blocks = _blocks(message.get("content")) if isinstance(message, dict) else []
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(blocks)
        else:
            merged.append((str(role), blocks))
    return merged


def anthropic_violation(body: dict[str, Any]) -> str | None:
    """The first rule of the Messages API that ``body`` breaks, as the API words its 400
    error; None when it keeps them all. Indexes count the merged messages."""
    merged = merged_messages(body.get("messages") or [])
    seen_uses: set[str] = set()
    for i, (role, blocks) in enumerate(merged):
        if not blocks and i != len(merged) - 1:
            return f"messages.{i}: all messages must have non-empty content except for the optional final assistant message"
        for j, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                text = block.get("text")
                if not isinstance(text, str) or text == "":
                    return "messages: text content blocks must be non-empty"
                if not text.strip():
                    return "messages: text content blocks must contain non-whitespace text"
            if block.get("type") == "tool_use":
                if block.get("id") in seen_uses:
                    return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
                seen_uses.add(block.get("id"))
        previous = merged[i - 1] if i else None
        uses = [b.get("id") for b in previous[1] if isinstance(b, dict) and b.get("type") == "tool_use"] \
            if previous is not None and previous[0] == "assistant" else []
        for j, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") not in uses:
                return (f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message.")
        if role == "assistant":
            ids = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            if not ids:
                continue
            following = merged[i + 1][1] if i + 1 < len(merged) and merged[i + 1][0] == "user" else []
            answered = {b.get("tool_use_id") for b in following if isinstance(b, dict) and b.get("type") == "tool_result"}
            missing = [x for x in ids if x not in answered]
            if missing:
                return (f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                        f"{', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding "
                        "`tool_result` block in the next message.")
            leading = list(itertools.takewhile(lambda b: isinstance(b, dict) and b.get("type") == "tool_result", following))
            if len(leading) < len(ids):
                return (f"messages.{i + 1}: Did not find {len(ids)} `tool_result` block(s) at the beginning of this "
                        "message. Messages following `tool_use` blocks must begin with a matching number of "
                        "`tool_result` blocks.")
    return None


def responses_violation(body: dict[str, Any]) -> str | None:
    """The first pairing rule of the Responses API that ``body``'s ``input`` breaks, as the
    API words its 400 error; None when it keeps them all: every call has exactly one output
    with its ``call_id`` after it, and no output comes without its call before it."""
    items = body.get("input")
    if not isinstance(items, list):
        return None
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    for item in items:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in RESPONSES_CALLS:
            open_calls[str(item.get("call_id"))] = 0
        elif kind in RESPONSES_OUTPUTS:
            call_id = str(item.get("call_id"))
            if call_id not in open_calls or call_id in answered:
                return f"No tool call found for function call output with call_id {call_id}."
            answered.add(call_id)
    for call_id in open_calls:
        if call_id not in answered:
            return f"No tool output found for function call {call_id}."
    return None


#: Gemini's 400 texts (providers.md GM-1..GM-4, GM-6; the gemini-cli issues in
#: agents-in-the-wild.md quote the same words).
GEMINI_RESPONSE_AFTER_CALL = "Please ensure that function response turn comes immediately after a function call turn."
GEMINI_CALL_AFTER_USER = ("Please ensure that function call turn comes immediately after a user turn or after a function "
                          "response turn.")
GEMINI_COUNT = ("Please ensure that the number of function response parts is equal to the number of function call "
                "parts of the function call turn.")
GEMINI_ALTERNATE = "Please ensure that multiturn requests alternate between user and model."


def gemini_violation(body: dict[str, Any]) -> str | None:
    """The first of Gemini's pairing rules that ``body`` (a ``generateContent`` request)
    breaks, as Gemini words its 400 error; None when it keeps them all: a function-call turn
    comes right after a user turn or a function-response turn; the turn after it is a user
    turn of as many function-response parts as it has call parts; a function-response turn
    comes right after a function-call turn; roles alternate; no turn is empty."""
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    for i, content in enumerate(contents):
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if not parts:
            return f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
        previous = contents[i - 1] if i else None
        if previous is not None and previous.get("role") == content.get("role"):
            return GEMINI_ALTERNATE
        calls = sum(1 for p in parts if "functionCall" in p)
        responses = sum(1 for p in parts if "functionResponse" in p)
        before = [p for p in (previous or {}).get("parts") or [] if isinstance(p, dict)]
        if calls and (previous is None or previous.get("role") != "user"):
            return GEMINI_CALL_AFTER_USER
        if responses and not any("functionCall" in p for p in before):
            return GEMINI_RESPONSE_AFTER_CALL
        if any("functionCall" in p for p in before) and responses != sum(1 for p in before if "functionCall" in p):
            return GEMINI_COUNT
    return None


@dataclass
class Recorded:
    """One request the stub received: its path and its JSON body (None when not JSON)."""

    method: str
    path: str
    body: Any


class Stub:
    """The server: ``with Stub() as stub:``, then ``stub.url`` and ``stub.requests``."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                stub._record("GET", self.path, None)
                if self.headers.get("Upgrade", "").lower() == "websocket":
                    self._reply(426, b'{"error":{"message":"Upgrade Required"}}')
                elif self.path.split("?")[0].endswith("/models"):
                    self._reply(200, b'{"object":"list","data":[],"models":[]}')
                else:
                    self._reply(404, b'{"error":{"message":"not found"}}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                stub._record("POST", self.path, body)
                path = self.path.split("?")[0]
                n = next(stub._ids)
                if path.endswith("/v1/messages") and isinstance(body, dict):
                    error = anthropic_violation(body)
                    if error is not None:
                        self._reply(400, json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": error},
                                                     "request_id": f"req_stub{n}"}).encode())
                    else:
                        self._reply(200, _anthropic_sse(n, body), "text/event-stream")
                elif path.endswith("/responses") and isinstance(body, dict):
                    error = responses_violation(body)
                    if error is not None:
                        self._reply(400, json.dumps({"error": {"message": error, "type": "invalid_request_error",
                                                               "param": "input", "code": None}}).encode())
                    else:
                        self._reply(200, _responses_sse(n), "text/event-stream")
                elif ":streamGenerateContent" in path or ":generateContent" in path:
                    error = gemini_violation(body) if isinstance(body, dict) else "Invalid JSON payload received."
                    if error is not None:
                        self._reply(400, json.dumps({"error": {"code": 400, "message": error,
                                                               "status": "INVALID_ARGUMENT"}}).encode())
                    else:
                        sse = "alt=sse" in self.path
                        self._reply(200, _gemini_reply(sse), "text/event-stream" if sse else "application/json")
                elif path.endswith(":countTokens"):
                    self._reply(200, b'{"totalTokens":1}')
                elif path.endswith("/count_tokens"):
                    self._reply(200, b'{"input_tokens":1}')
                else:
                    self._reply(404, b'{"error":{"message":"not found"}}')

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _record(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append(Recorded(method, path, body))

    def __enter__(self) -> Stub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _sse(events: Iterator[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def _anthropic_sse(n: int, body: dict[str, Any]) -> bytes:
    """A one-text reply, ``end_turn``, with a new message id."""
    model = body.get("model", "claude-stub")
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": f"msg_stub{n:06d}", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(iter(events))


def _responses_sse(n: int) -> bytes:
    """``response.created``, one assistant message item, ``response.completed``."""
    item = {"type": "message", "id": f"msg_stub{n:06d}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}]}
    response = {"id": f"resp_stub{n:06d}", "object": "response", "status": "in_progress", "output": []}
    usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}
    events = [
        ("response.created", {"type": "response.created", "response": response}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": {**response, "status": "completed", "output": [item], "usage": usage}}),
    ]
    return _sse(iter(events))


def _gemini_reply(sse: bool) -> bytes:
    """One ``GenerateContentResponse``: the text "ok", ``finishReason: STOP`` (as one SSE
    event for ``alt=sse``)."""
    chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
             "modelVersion": "gemini-2.5-flash"}
    return f"data: {json.dumps(chunk)}\r\n\r\n".encode() if sse else json.dumps(chunk).encode()
