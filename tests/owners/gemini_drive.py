"""Driving Gemini CLI offline (``../shared/research/owners.md``), and reading what it sent.

:func:`resume` puts a session where Gemini CLI 0.61.0 looks for it in a throwaway ``HOME``
(``~/.gemini/tmp/<project>/chats/session-*.jsonl``, the project named after the working
folder), resumes it with ``gemini --resume <id> -m gemini-2.5-flash -p continue`` against a
:class:`~.stub.Stub` (``GOOGLE_GEMINI_BASE_URL``; a model named, so that the CLI's model router
sends no classifier request first, which the stub cannot answer and the CLI retries for a
minute and a half), and returns the model request: the ``streamGenerateContent`` body that
ends with the prompt. :func:`pieces` lists what a history holds, for the tests to compare.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from normalizer.formats._gemini import Calls
from normalizer.formats._gemini_cli import GeminiCliReplay, entry_messages

from .drive import PROMPT, TIMEOUT, Owner, Resumed
from .stub import Stub


def resume(owner: Owner, session: bytes, workdir: Path) -> Resumed:
    """Resume ``session`` (Gemini CLI session bytes) with ``owner`` in ``workdir`` (a fresh folder)."""
    home, work = workdir / "home", workdir / "work"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "telemetry": {"enabled": False}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    sid = json.loads(session.splitlines()[0])["sessionId"]
    chats = home / ".gemini" / "tmp" / work.name / "chats"
    chats.mkdir(parents=True)
    (chats / f"session-2026-01-01T00-00-{sid[:8]}.jsonl").write_bytes(session)
    with Stub() as stub:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TMPDIR": str(workdir), "LANG": "C.UTF-8",
               "GOOGLE_GEMINI_BASE_URL": stub.url, "GEMINI_API_KEY": "stub", "GEMINI_CLI_TRUST_WORKSPACE": "true",
               "GEMINI_CLI_NO_RELAUNCH": "true"}
        argv = [owner.path, "--resume", sid, "-m", "gemini-2.5-flash", "-p", PROMPT]
        done = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        bodies = [r.body for r in stub.requests if r.method == "POST" and ":streamGenerateContent" in r.path]
    request = next((b for b in bodies if isinstance(b, dict) and _ends_with_prompt(b)), None)
    return Resumed(request, done.returncode, (done.stdout + done.stderr).decode(errors="replace"))


def _ends_with_prompt(body: dict[str, Any]) -> bool:
    contents = body.get("contents") or []
    parts = contents[-1].get("parts") if contents and isinstance(contents[-1], dict) else None
    return isinstance(parts, list) and any(isinstance(p, dict) and p.get("text") == PROMPT for p in parts)


def _piece(part: dict[str, Any]) -> str | None:
    """A part as the tests compare it: a text, a call (name, args), a response (name,
    response); ids left out (the CLI rewrites them on resume). The session context is left
    out too (the CLI sends a fresh one), and thoughts."""
    if part.get("thought"):
        return None
    if isinstance(part.get("text"), str):
        return None if not part["text"] or part["text"].startswith("<session_context>") else f"text {part['text']}"
    if isinstance(part.get("functionCall"), dict):
        call = part["functionCall"]
        return f"call {call.get('name')} {json.dumps(call.get('args'), sort_keys=True)}"
    if isinstance(part.get("functionResponse"), dict):
        response = part["functionResponse"]
        return f"response {response.get('name')} {json.dumps(response.get('response'), sort_keys=True)}"
    return None


def request_pieces(request: dict[str, Any]) -> list[str]:
    """What a request's history holds, in order (the prompt left out)."""
    parts = [p for c in request.get("contents") or [] for p in c.get("parts") or [] if isinstance(p, dict)]
    pieces = [piece for p in parts if (piece := _piece(p)) is not None]
    return pieces[:-1] if pieces and pieces[-1] == f"text {PROMPT}" else pieces


def session_pieces(session: bytes) -> list[str]:
    """What a session file's history holds, in the CLI's order, each call's response once
    (the first: the later copies are the CLI's duplicates), replayed as the CLI replays it."""
    replay = GeminiCliReplay()
    for n, line in enumerate(session.splitlines(), 1):
        if line.strip():
            replay.feed(json.loads(line), line=n)
    calls, answered, pieces = Calls(), set(), []
    for entry in replay.entries():
        record = entry.record
        for message, origin in entry_messages(entry, calls):
            if message["role"] == "tool":
                if message["tool_call_id"] in answered:
                    continue
                answered.add(message["tool_call_id"])
            part = _origin_part(record, origin.where)
            if part is not None:
                pieces += [p for p in (_piece(x) for x in part) if p is not None]
    return pieces


def _origin_part(record: dict[str, Any], where: str) -> list[dict[str, Any]] | None:
    """The parts of ``record`` a chat message came from (``Origin.where``)."""
    content = record.get("content")
    parts = [{"text": content}] if isinstance(content, str) else content if isinstance(content, list) else [content]
    if record.get("type") == "gemini" and where == "":  # the model turn (thoughts are not compared)
        if any(isinstance(p, dict) and p.get("functionCall") for p in parts):
            return parts  # a record the CLI rewrote: its parts are the turn
        calls = [{"functionCall": {"name": c.get("name"), "args": c.get("args")}} for c in record.get("toolCalls") or ()]
        return [p for p in parts if isinstance(p, dict)] + calls
    if where.startswith("content["):
        return [parts[int(where[len("content["):-1])]]
    if where.startswith("toolCalls["):
        k_text, _, j_text = where[len("toolCalls["):].partition("].result[")
        result = record["toolCalls"][int(k_text)]["result"]
        call = record["toolCalls"][int(k_text)]
        if isinstance(result, str):
            return [{"functionResponse": {"name": call.get("name"), "response": {"output": result}}}]
        return [(result if isinstance(result, list) else [result])[int(j_text[:-1])]]
    return [p for p in parts if isinstance(p, dict) and "functionResponse" not in p]
