"""A stand-in for a model provider on 127.0.0.1: it records every request body and answers
with a fixed reply in the shape the path asks for (Chat Completions, Anthropic Messages,
Responses). No network, no keys: the frameworks under test are pointed at it."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "ok"


def chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_stub", "type": "message", "role": "assistant", "model": body.get("model", "stub"),
        "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def responses_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_stub", "object": "response", "created_at": 0, "status": "completed", "model": body.get("model", "stub"),
        "output": [{"type": "message", "id": "msg_stub", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}],
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


@dataclass
class Stub:
    """The running server: ``url`` (``http://127.0.0.1:PORT``) and every request it got."""

    url: str
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def bodies(self, path_end: str) -> list[dict[str, Any]]:
        return [body for path, body in self.requests if path.endswith(path_end)]


def serve() -> tuple[ThreadingHTTPServer, Stub]:
    stub: Stub

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            path = self.path.split("?", 1)[0]
            stub.requests.append((path, body))
            if path.endswith("/messages"):
                reply = anthropic_reply(body)
            elif path.endswith("/responses"):
                reply = responses_reply(body)
            else:
                reply = chat_reply(body)
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    stub = Stub(f"http://127.0.0.1:{server.server_address[1]}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, stub
