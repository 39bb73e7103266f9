"""Session and history formats in, OpenAI Chat Completions messages out.

Each format is a sans-I/O converter (``feed(record, line=...) -> list[dict]``,
``close() -> list[dict]``) registered in :data:`FORMATS`; the readers open a file (or
stdin), split it into records in constant memory and drive a converter.

``_records`` splits bytes into JSON records (JSONL lines or a document's elements) within
the documented limits; ``_read`` detects the format and drives a converter. Writing is one
table of encoders, :data:`ENCODERS` (``_encode``: messages in, bytes out), that the writers
(``_writers``) pump into files.

===============  =================================================================
``chat``         Chat Completions messages: a JSON array, JSONL, or an object with
                 ``messages`` (request body, hermes request dump or session snapshot)
``responses``    OpenAI Responses input items (array or JSONL, or a body's ``input``)
``codex``        Codex CLI rollout JSONL
``claude-code``  Claude Code session JSONL
``anthropic``    Anthropic Messages (``tool_use`` / ``tool_result`` blocks, ``system``)
``sharegpt``     ShareGPT / LLaMA-Factory ``conversations`` (one conversation per record)
``finetune``     OpenAI fine-tuning JSONL (one conversation per line)
===============  =================================================================
"""

from __future__ import annotations

from ._chat import ChatConverter, FinetuneConverter, ShareGPTConverter
from ._claude import AnthropicConverter, ClaudeCodeConverter
from ._codex import CodexConverter, CodexPlan, plan_codex
from ._detect import detect_format
from ._encode import ENCODERS, Encoder
from ._read import (
    FORMATS,
    AsyncMessageStream,
    Conversation,
    MessageStream,
    aread_conversations,
    aread_messages,
    read_conversations,
    read_messages,
)
from ._responses import ResponsesConverter
from ._writers import (
    WRITERS,
    awrite_finetune,
    awrite_json_array,
    awrite_jsonl,
    write_finetune,
    write_json_array,
    write_jsonl,
)

__all__ = [
    "FORMATS",
    "ENCODERS",
    "Encoder",
    "WRITERS",
    "write_jsonl",
    "write_json_array",
    "write_finetune",
    "awrite_jsonl",
    "awrite_json_array",
    "awrite_finetune",
    "detect_format",
    "read_messages",
    "aread_messages",
    "read_conversations",
    "aread_conversations",
    "Conversation",
    "MessageStream",
    "AsyncMessageStream",
    "ChatConverter",
    "ResponsesConverter",
    "CodexConverter",
    "CodexPlan",
    "plan_codex",
    "ClaudeCodeConverter",
    "AnthropicConverter",
    "ShareGPTConverter",
    "FinetuneConverter",
]
