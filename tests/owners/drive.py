"""Driving the owners offline, and reading what they sent.

* :func:`owner_binaries` reads ``CHATNORM_OWNER_CLAUDE`` / ``CHATNORM_OWNER_CODEX`` (paths
  separated by ``:``, as ``.ci/owners.sh`` exports them).
* :func:`resume` puts a session where its owner looks for it, in a throwaway ``HOME`` (and
  ``CODEX_HOME``), resumes it with the prompt :data:`PROMPT` against a :class:`~.stub.Stub`,
  and returns the first model request: the first one whose last input is the prompt (Claude
  Code also sends "Warmup" requests of its own first, with no history).
* :func:`items` turns a request into the multiset the tests compare (see its docstring).
* :func:`variants` derives the broken files from a sample, as a crash or an interrupt leaves
  them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .stub import RESPONSES_CALLS, RESPONSES_OUTPUTS, Stub

#: What the user types on resume. Unlike any text of the samples, so that the model request
#: is the one that ends with it.
PROMPT = "continue"

#: A Claude Code or Codex start takes about 0.5 to 2 s here; a hung one is a failure.
TIMEOUT = 120

ENV_VARS = {"claude": "CHATNORM_OWNER_CLAUDE", "codex": "CHATNORM_OWNER_CODEX", "gemini": "CHATNORM_OWNER_GEMINI"}


@dataclass(frozen=True)
class Owner:
    kind: str  # "claude", "codex" or "gemini" (driven by gemini_drive.py)
    path: str
    version: str

    def __str__(self) -> str:
        return f"{self.kind}-{self.version}"


def owner_binaries(kind: str) -> list[str]:
    """The binaries named in the owner's environment variable (empty when it is unset)."""
    value = os.environ.get(ENV_VARS[kind], "")
    return [p for p in value.split(":") if p]


@cache
def version_of(path: str) -> str:
    """``2.1.332`` from ``claude --version`` (``2.1.332 (Claude Code)``) or ``codex-cli 0.171.0``."""
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=TIMEOUT,
                         stdin=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", ""), "HOME": tempfile.gettempdir()})
    match = re.search(r"\d+\.\d+\.\d+\S*", out.stdout)
    if out.returncode != 0 or match is None:
        raise RuntimeError(f"{path} --version: exit {out.returncode}: {out.stdout!r} {out.stderr!r}")
    return match.group(0)


# -- resuming -----------------------------------------------------------------------------------


@dataclass
class Resumed:
    """One resume: the model request (None when the owner sent none), and the owner's exit
    status and output, for failure messages."""

    request: dict[str, Any] | None
    returncode: int
    output: str

    def describe(self) -> str:
        return f"exit {self.returncode}; output:\n{self.output[-3000:]}"


def _first_line_value(data: bytes) -> list[Any]:
    values = []
    for raw in data.splitlines():
        try:
            values.append(json.loads(raw))
        except ValueError:
            continue
    return values


def _is_prompt_request(body: Any, kind: str) -> bool:
    """The request ends with the user's :data:`PROMPT` (the model request of the resume)."""
    if not isinstance(body, dict):
        return False
    if kind == "claude":
        # (the last user message: 2.1.332 may send a "system" one after it, see stub.merged_messages)
        users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
        if not users or users[-1].get("role") != "user":
            return False
        content = users[-1].get("content")
        texts = [content] if isinstance(content, str) else [b.get("text") for b in content if isinstance(b, dict)]
        return PROMPT in texts
    inputs = body.get("input") or []
    return any(isinstance(i, dict) and i.get("type") == "message" and i.get("role") == "user"
               and any(isinstance(c, dict) and c.get("text") == PROMPT for c in i.get("content") or []) for i in inputs[-3:])


def _unplace(text: str, run: Path) -> str:
    """The run's own folder written as ``<RUN>`` (the owners tell the model their cwd and
    home): two runs of one case then send the same texts."""
    dashed = re.sub(r"[^a-zA-Z0-9]", "-", str(run))
    return text.replace(str(run), "<RUN>").replace(dashed, "<RUN>")


def resume(owner: Owner, session: bytes, workdir: Path) -> Resumed:
    """Resume ``session`` (a Claude Code session or a Codex rollout, as bytes) with ``owner``
    in ``workdir`` (a fresh folder), against a new stub; the model request, with the
    folder's own path written ``<RUN>``."""
    home, work = workdir / "home", workdir / "work"
    home.mkdir(parents=True)
    work.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "TMPDIR": str(workdir), "LANG": "C.UTF-8"}
    values = [v for v in _first_line_value(session) if isinstance(v, dict)]
    with Stub() as stub:
        if owner.kind == "claude":
            sid = next(v["sessionId"] for v in values if isinstance(v.get("sessionId"), str))
            (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True}))
            project = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(work))
            project.mkdir(parents=True)
            (project / f"{sid}.jsonl").write_bytes(session)
            env.update(ANTHROPIC_BASE_URL=stub.url, ANTHROPIC_API_KEY="sk-test", DISABLE_TELEMETRY="1",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
            argv = [owner.path, "-p", "--resume", sid, "--output-format", "json", PROMPT]
        else:
            meta = next(v["payload"] for v in values if v.get("type") == "session_meta")
            sid, stamp = meta["id"], meta["timestamp"]
            provider = meta.get("model_provider") or "openai"
            codex_home = workdir / "codex"
            folder = codex_home / "sessions" / stamp[:4] / stamp[5:7] / stamp[8:10]
            folder.mkdir(parents=True)
            (folder / f"rollout-{stamp[:19].replace(':', '-')}-{sid}.jsonl").write_bytes(session)
            config = f'model_provider = "{provider}"\nopenai_base_url = "{stub.url}/v1"\n'
            if provider != "openai":  # a provider of the user's own config: declared here, at the stub
                config += (f'\n[model_providers."{provider}"]\nname = "{provider}"\nbase_url = "{stub.url}/v1"\n'
                           'env_key = "OPENAI_API_KEY"\nwire_api = "responses"\n')
            (codex_home / "config.toml").write_text(config)
            env.update(CODEX_HOME=str(codex_home), OPENAI_BASE_URL=f"{stub.url}/v1", OPENAI_API_KEY="sk-test")
            argv = [owner.path, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                    "resume", sid, PROMPT]
        done = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT)
        requests = [r.body for r in stub.requests if r.method == "POST"]
    request = next((b for b in requests if _is_prompt_request(b, owner.kind)), None)
    if request is not None:
        request = json.loads(_unplace(json.dumps(request), workdir))
    output = (done.stdout + done.stderr).decode(errors="replace")
    return Resumed(request, done.returncode, output)


# -- what a request holds -----------------------------------------------------------------------


def _canonical(value: Any) -> str:
    """A JSON value as one string, keys sorted, ``cache_control`` left out everywhere: Claude
    Code puts it on the last blocks of a request, wherever they are (it marks a position,
    not content)."""

    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k != "cache_control"}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    return json.dumps(strip(value), sort_keys=True, ensure_ascii=False)


def _result_content(content: Any) -> str:
    """A tool result's content as one string: a string as it is; a list of blocks whose
    texts are all there is, their texts joined by newlines (the owners send a stored string
    as a string or as one text block, depending on version); anything else canonical JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(str(b.get("text")) for b in content)
    return _canonical(content)


Item = tuple[str, str, str]


def items(request: dict[str, Any], kind: str) -> Counter[Item]:
    """What the history of a model request holds, as a multiset of ``(kind, id, content)``.

    Why this shape: a repair may move a result up to its call, and an owner merges lines
    into messages (and splits them) its own way, so neither the order of the history nor its
    message boundaries say whether something was lost; what was said, called and answered
    does. Each text block (``id`` is the role), tool call (``id`` its id, ``content`` its name
    and arguments), tool result (``id`` the call's id, ``content`` its text, ``is_error``
    apart) and reasoning block is one item; a multiset, not a set, because a text said twice
    and kept once is a loss too. Left out: the request's ``system``, ``tools`` and settings
    (they are the owner's, not the session's: the same for both files) and ``cache_control``
    (a position marker). The run's folder is already written ``<RUN>`` (:func:`resume`).
    """
    out: Counter[Item] = Counter()
    if kind == "claude":
        for message in request.get("messages") or []:
            role = str(message.get("role"))
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                t = block.get("type")
                if t == "text":
                    out[("text", role, block.get("text", ""))] += 1
                elif t == "tool_use":
                    out[("tool_use", block.get("id"), _canonical([block.get("name"), block.get("input")]))] += 1
                elif t == "tool_result":
                    out[("tool_result", block.get("tool_use_id"), _result_content(block.get("content")))] += 1
                elif t == "thinking":
                    out[("thinking", "", _canonical([block.get("thinking"), block.get("signature")]))] += 1
                elif t in ("image", "document"):
                    out[(t, role, hashlib.sha256(_canonical(block.get("source")).encode()).hexdigest())] += 1
                else:
                    out[(str(t), role, _canonical(block))] += 1
        return out
    for item in request.get("input") or []:
        t = str(item.get("type"))
        if t == "message":
            role = str(item.get("role"))
            for part in item.get("content") or []:
                out[("message", role, str(part.get("text")) if "text" in part else _canonical(part))] += 1
        elif t in RESPONSES_CALLS:
            what = item.get("action") if t == "local_shell_call" else [item.get("name"), item.get("arguments", item.get("input"))]
            out[(t, str(item.get("call_id")), _canonical(what))] += 1
        elif t in RESPONSES_OUTPUTS:
            out[("output", str(item.get("call_id")), _result_content(item.get("output")))] += 1
        elif t == "reasoning":
            out[("reasoning", "", _canonical([item.get("summary"), item.get("content"), item.get("encrypted_content")]))] += 1
        else:
            out[(t, "", _canonical({k: v for k, v in item.items() if k not in ("id", "status")}))] += 1
    return out


#: What an owner writes into the request by itself, not from the file: Claude Code puts an
#: assistant "No response requested." between a history that ends with a user message (a
#: result, a stub) and the new prompt; whether it does depends on how the file ends, which a
#: repair changes (a stub where the call was left out).
OWNER_FILLERS = {("text", "assistant", "No response requested.")}

#: The result an owner writes by itself for a call the file leaves unanswered (Codex:
#: ``"aborted"``; Claude Code 2.1.332, where 2.0.76 leaves the call out: the text below, from
#: its binary); a stub may take its place, and nothing else may (a real result replaced by a
#: stub is a loss).
OWNER_RESULTS = {
    "aborted",
    "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. "
    "Check whether it took effect before relying on it or running it again.]",
}

RESULT_KINDS = {"tool_result", "output"}
CALL_KINDS = {"tool_use", *RESPONSES_CALLS}


def file_items(data: bytes, kind: str) -> Counter[Item]:
    """What the session file itself holds, as :func:`items` counts a request: every message
    line's content (Claude Code: a ``user``/``assistant`` line's ``message``; Codex: a
    ``response_item``'s payload), read as if one request carried them all. A repaired
    request may hold what the original's did not, when it is there in the file: an owner
    whose walk of the original skipped real lines (Claude Code 2.0.76 stops its chain at a
    user line typed between one message's parallel calls) sends them once the repair has put
    them back on the chain. That is a repair too; an item found nowhere in the file is not."""
    messages: list[Any] = []
    for value in _first_line_value(data):
        if not isinstance(value, dict):
            continue
        if kind == "claude" and value.get("type") in ("user", "assistant") and isinstance(value.get("message"), dict):
            messages.append(value["message"])
        elif kind != "claude" and value.get("type") == "response_item" and isinstance(value.get("payload"), dict):
            messages.append(value["payload"])
    return items({"messages": messages} if kind == "claude" else {"input": messages}, kind)


def compare(original: Counter[Item], repaired: Counter[Item], stub_text: str,
            in_file: Counter[Item] | None = None) -> tuple[list[Item], list[Item]]:
    """What the repaired request lost and what it gained beyond the repairs, as lists (both
    empty when the repair kept everything and added only stubs).

    A repair may add a stub result (``content`` the stub text) and with it the call it
    answers: an owner leaves an unanswered call out of its request (Claude Code) or answers
    it itself (Codex: ``"aborted"``, :data:`OWNER_RESULTS`), so the original's request lacks
    that call or has the owner's answer where the repaired one has the stub. Those are
    allowed (and :data:`OWNER_FILLERS` either way), and so is what the file itself holds
    (``in_file``: :func:`file_items`) that the owner's walk of the original left out.
    """
    stubbed = {i for (k, i, c) in repaired if k in RESULT_KINDS and c == stub_text}
    lost = [item for item in (original - repaired).elements() if item not in OWNER_FILLERS
            and not (item[0] in RESULT_KINDS and item[1] in stubbed and item[2] in OWNER_RESULTS)]
    gained = [item for item in (repaired - original).elements() if item not in OWNER_FILLERS
              and not (item[1] in stubbed and (item[0] in CALL_KINDS or (item[0] in RESULT_KINDS and item[2] == stub_text)))]
    if in_file is not None:  # recovered from the file, as often as the file holds it
        recovered = in_file - original
        kept = []
        for item in gained:
            if recovered[item] > 0:
                recovered[item] -= 1
            else:
                kept.append(item)
        gained = kept
    return lost, gained


def stub_ids(request: dict[str, Any] | None, kind: str, stub_text: str) -> set[str]:
    """The calls a request answers with the stub text."""
    return {i for (k, i, c) in items(request or {}, kind) if k in RESULT_KINDS and c == stub_text}


def call_ids(request: dict[str, Any] | None, kind: str) -> set[str]:
    """The ids of the calls a request holds."""
    return {i for (k, i, c) in items(request or {}, kind) if k in CALL_KINDS}


def subagent_transcript(data: bytes) -> bool:
    """A Claude Code sub-agent's transcript (``subagents/agent-*.jsonl``): every conversation
    line is on the sidechain. No owner resumes one on its own (2.1.332 exits 1 with no
    request), so there is nothing to judge."""
    lines = [v for v in _first_line_value(data) if isinstance(v, dict) and v.get("type") in ("user", "assistant")]
    return bool(lines) and all(v.get("isSidechain") for v in lines)


# -- broken files, made from a sample -----------------------------------------------------------


def _value(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _role(value: Any, kind: str) -> str:
    """What a line is: "call", "result", "user" (text typed by the user), "assistant" (other
    assistant content) or "other"."""
    if not isinstance(value, dict):
        return "other"
    if kind == "claude":
        if value.get("isSidechain") or value.get("isMeta"):
            return "other"
        message = value.get("message")
        if not isinstance(message, dict):
            return "other"
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if value.get("type") == "assistant":
            return "call" if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks) else "assistant"
        if value.get("type") == "user":
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                return "result"
            text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
            return "user" if text.strip() and not text.lstrip().startswith("<") else "other"
        return "other"
    payload = value.get("payload") if value.get("type") == "response_item" else None
    if not isinstance(payload, dict):
        return "other"
    t = payload.get("type")
    if t in RESPONSES_CALLS:
        return "call"
    if t in RESPONSES_OUTPUTS:
        return "result"
    if t == "message" and payload.get("role") == "user":
        text = " ".join(str(c.get("text", "")) for c in payload.get("content") or [] if isinstance(c, dict))
        return "user" if not text.lstrip().startswith(("<", "#")) else "other"
    return "assistant" if t in ("message", "reasoning") else "other"


def _call_ids(value: Any, kind: str) -> list[str]:
    if kind == "claude":
        return [b["id"] for b in value["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    return [value["payload"].get("call_id")]


def _result_ids(value: Any, kind: str) -> list[str]:
    if kind == "claude":
        return [b.get("tool_use_id") for b in value["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return [value["payload"].get("call_id")]


def _turn_key(value: Any, kind: str) -> Any:
    return value["message"].get("id") if kind == "claude" else None


def _user_line(template: Any, kind: str, text: str, parent: str | None) -> bytes:
    """A user line typed while a tool ran, in the envelope of ``template`` (a line of the file)."""
    if kind == "claude":
        line = {k: v for k, v in template.items() if k not in ("message", "toolUseResult", "sourceToolAssistantUUID")}
        line.update(parentUuid=parent, type="user", message={"role": "user", "content": text},
                    uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"chatnorm-owners/{text}/{parent}")))
        return json.dumps(line).encode()
    return json.dumps({"timestamp": template.get("timestamp"), "type": "response_item",
                       "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}).encode()


def variants(data: bytes, kind: str) -> dict[str, bytes]:
    """The broken files derived from one sample (a variant whose pattern the sample lacks is
    left out):

    * ``cut_after_call``: the file ends after its first call line that has a result later.
    * ``cut_after_first_parallel``: ends after the first of two calls of one turn (Claude
      Code: two ``tool_use`` lines of one ``message.id``; Codex: two calls with no output
      between).
    * ``cut_mid_split_turn``: ends after the first line of the first assistant turn written
      over several lines (Claude Code: one ``message.id``; Codex: assistant items with no
      output or user message between) whose later lines hold a call.
    * ``user_between``: a user line (typed while the tool ran) between the first answered
      call and its result (Claude Code: the result hangs from it).
    * ``result_after_next_turn``: the first result moved after the next user message and the
      assistant lines (text, reasoning: no call) that follow it (a user message is added
      after it when the sample has none).
    * ``torn``: the last line cut in the middle, no newline (killed mid-write).
    """
    lines = data.splitlines(keepends=True)
    values = [_value(line) for line in lines]
    roles = [_role(v, kind) for v in values]
    out: dict[str, bytes] = {}

    def result_line(call_at: int, call_id: str) -> int | None:
        for j in range(call_at + 1, len(lines)):
            if roles[j] == "result" and call_id in _result_ids(values[j], kind):
                return j
        return None

    first = next(((i, r) for i in range(len(lines)) if roles[i] == "call"
                  for r in [result_line(i, _call_ids(values[i], kind)[0])] if r is not None), None)
    if first is not None:
        call_at, result_at = first
        out["cut_after_call"] = b"".join(lines[: call_at + 1])
        # user_between
        template = values[result_at]
        parent = values[call_at].get("uuid") if kind == "claude" else None
        user = _user_line(template, kind, "also check the tests please", parent)
        result = lines[result_at]
        if kind == "claude":
            moved = dict(values[result_at])
            moved["parentUuid"] = json.loads(user)["uuid"]
            result = json.dumps(moved).encode() + b"\n"
        out["user_between"] = b"".join(lines[: call_at + 1] + [user + b"\n"] + lines[call_at + 1: result_at] + [result]
                                       + lines[result_at + 1:])
        # result_after_next_turn
        nxt = next((j for j in range(result_at + 1, len(lines)) if roles[j] == "user"), None)
        rest = lines[:result_at] + lines[result_at + 1:]
        if nxt is None:
            extra = _user_line(template, kind, "and then?", values[result_at].get("uuid") if kind == "claude" else None)
            out["result_after_next_turn"] = b"".join(rest + [extra + b"\n", lines[result_at]])
        else:  # after the next user message and the assistant lines that answer it (in ``rest``, one line up)
            at = nxt
            while at < len(rest) and roles[at + 1] == "assistant":
                at += 1
            out["result_after_next_turn"] = b"".join(rest[:at] + [lines[result_at]] + rest[at:])
    for i in range(len(lines) - 1):
        if roles[i] != "call":
            continue
        j = i + 1
        if kind == "claude":
            key = _turn_key(values[i], kind)
            while j < len(lines) and roles[j] not in ("call", "user", "result"):
                j += 1
            if j < len(lines) and roles[j] == "call" and _turn_key(values[j], kind) == key:
                out["cut_after_first_parallel"] = b"".join(lines[: i + 1])
                break
        elif roles[j] == "call":
            out["cut_after_first_parallel"] = b"".join(lines[: i + 1])
            break
    for i in range(len(lines) - 1):
        if roles[i] not in ("assistant", "call"):
            continue
        later = [j for j in range(i + 1, len(lines)) if roles[j] in ("assistant", "call")
                 and (kind == "codex" or _turn_key(values[j], kind) == _turn_key(values[i], kind))]
        if kind == "codex":  # the items of the turn: up to the first output or user message
            stop = next((j for j in range(i + 1, len(lines)) if roles[j] in ("result", "user")), len(lines))
            later = [j for j in later if j < stop]
        if later and any(roles[j] == "call" for j in later) and roles[i] != "call":
            out["cut_mid_split_turn"] = b"".join(lines[: i + 1])
            break
    body = lines[-1].rstrip(b"\n")
    out["torn"] = b"".join(lines[:-1]) + body[: len(body) // 2]
    return out



# -- one case -----------------------------------------------------------------------------------


@dataclass
class Judged:
    original: Resumed
    repaired: Resumed
    stubs: list[str]  # the calls the repair answered with a stub (from its report)
    lost: list[Item]
    gained: list[Item]
    violation: str | None


def judge(owner: Owner, data: bytes, workdir: Path, stub_text: str) -> Judged:
    """Repair ``data`` with ``normalizer.repair_session``, resume the original and the
    repaired file with ``owner`` (the two at once: each start mostly waits), and compare their
    model requests (see :func:`compare`)."""
    import io
    from concurrent.futures import ThreadPoolExecutor

    from normalizer import repair_session

    from .stub import anthropic_violation, responses_violation

    out = io.BytesIO()
    report = repair_session(io.BytesIO(data), out)
    repaired = out.getvalue()
    stubs = [re.match(r"call (\S+)", r.detail).group(1) for r in report.records  # type: ignore[union-attr]
             if r.kind == "stub_missing_result"]
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(resume, owner, data, workdir / "original")
        second = pool.submit(resume, owner, repaired, workdir / "repaired")
        original, fixed = first.result(), second.result()
    lost: list[Item] = []
    gained: list[Item] = []
    violation = None
    if original.request is not None and fixed.request is not None:
        lost, gained = compare(items(original.request, owner.kind), items(fixed.request, owner.kind), stub_text,
                               file_items(data, owner.kind))
    if fixed.request is not None:
        violation = (anthropic_violation if owner.kind == "claude" else responses_violation)(fixed.request)
    return Judged(original, fixed, stubs, lost, gained, violation)


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:3])


def written_by(data: bytes, kind: str) -> str | None:
    """The newest version of the owner that wrote lines of the file (Claude Code: each
    line's ``version``; Codex: ``session_meta``'s ``cli_version``)."""
    found = []
    for value in _first_line_value(data):
        if not isinstance(value, dict):
            continue
        version = value.get("version") if kind == "claude" else (value.get("payload") or {}).get("cli_version")
        if isinstance(version, str) and re.match(r"\d+\.\d+", version):
            found.append(version)
    return max(found, key=_numbers) if found else None


def too_new(owner: Owner, data: bytes) -> str | None:
    """Why ``owner`` does not judge this file, when a newer version wrote it: an owner reads
    what it and older versions wrote (2.0.76 loads only the tail of a 2.1.38 file, and sends
    its whitespace-only text blocks: a request the API refuses, repaired or not)."""
    version = written_by(data, owner.kind)
    if version is not None and _numbers(version) > _numbers(owner.version):
        return f"written by {owner.kind} {version}, newer than {owner}"
    return None
