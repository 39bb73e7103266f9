"""Session and history formats in, OpenAI Chat Completions messages out, and back.

Each format is one module (``_chat``, ``_responses``, ``_codex``, ``_claude``, ``_anthropic``,
``_sharegpt``, ``_finetune``) that declares its :class:`~._format.Format`: its traits, its
``guess`` (detection), its sans-I/O converter (``feed(record, line=...) -> list[dict]``,
``close() -> list[dict]``) and the outputs it writes. ``_registry`` lists them once, and
:data:`FORMATS`, :data:`ENCODERS`, :data:`SESSION_FORMATS`, the detection and the names
``--from`` / ``--to`` take derive from it. Reading a file is layered, each layer sans-I/O but
the last:

* ``_records``: bytes to JSON records (JSONL lines, or a document's elements through ijson),
  within the documented limits, each with its place in the file (:class:`Position`).
* ``_reader``: the :class:`~._reader.Reader`: the container and the format (``_detect``),
  the converter, skip-or-raise, the Codex first pass; bytes in, messages and events out.
* ``_read``: the sync and async readers, two thin pumps around the Reader that open the
  file and fetch its bytes, or take records already in memory (``read_messages``,
  ``aread_messages``...).

In memory, :func:`from_responses` / :func:`to_responses` and :func:`from_anthropic` /
:func:`to_anthropic` (``_memory``) drive the same converters and encoders over a list.

Writing is one table of encoders, :data:`ENCODERS` (each a :class:`~._writing.FormatWriter`,
messages in, bytes out, declared by its format's module), that the writers (``_writers``) and the command line pump into files. A Claude Code session or a
Codex rollout can also be repaired in its own format (``_sessions``: bytes in, the same
session out with the fewest edits, :class:`SessionRepairer`).

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

# Names are loaded lazily (PEP 562), as in the package's own __init__: the command line
# reading chat JSONL needs the reader and an encoder, not the session repairers, the
# writers or the in-memory converters (each a few ms of start-up). Type checkers see the
# names through the TYPE_CHECKING imports, which mirror _EXPORTS (tests/formats/test_lazy_names.py).

from typing import TYPE_CHECKING, Any

from .._lazy import export_names, load_export

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "AnthropicConverter": "._anthropic",
    "ChatConverter": "._chat",
    "ClaudeCodeConverter": "._claude",
    **dict.fromkeys(("CodexConverter", "CodexPlan", "plan_codex"), "._codex"),
    "detect_format": "._detect",
    "FinetuneConverter": "._finetune",
    **dict.fromkeys(("from_anthropic", "from_responses", "to_anthropic", "to_responses"), "._memory"),
    **dict.fromkeys(("ENCODERS", "FORMATS", "SESSION_FORMATS"), "._registry"),
    **dict.fromkeys((
        "AsyncConversationStream", "AsyncMessageStream", "Conversation", "ConversationStream",
        "MessageStream", "aread_conversations", "aread_messages", "read_conversations", "read_messages",
    ), "._read"),
    "Position": "._records",
    "ResponsesConverter": "._responses",
    "ShareGPTConverter": "._sharegpt",
    **dict.fromkeys(("SessionRepairer", "repair_session"), "._sessions"),
    **dict.fromkeys((
        "WRITERS", "awrite_anthropic", "awrite_finetune", "awrite_json_array", "awrite_jsonl", "awrite_responses",
        "write_anthropic", "write_finetune", "write_json_array", "write_jsonl", "write_responses",
    ), "._writers"),
    "Encoder": "._writing",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return load_export(globals(), _EXPORTS, name)


def __dir__() -> list[str]:
    return export_names(globals(), _EXPORTS)


if TYPE_CHECKING:
    from ._anthropic import AnthropicConverter
    from ._chat import ChatConverter
    from ._claude import ClaudeCodeConverter
    from ._codex import CodexConverter, CodexPlan, plan_codex
    from ._detect import detect_format
    from ._finetune import FinetuneConverter
    from ._memory import from_anthropic, from_responses, to_anthropic, to_responses
    from ._read import (
        AsyncConversationStream,
        AsyncMessageStream,
        Conversation,
        ConversationStream,
        MessageStream,
        aread_conversations,
        aread_messages,
        read_conversations,
        read_messages,
    )
    from ._records import Position
    from ._registry import ENCODERS, FORMATS, SESSION_FORMATS
    from ._responses import ResponsesConverter
    from ._sharegpt import ShareGPTConverter
    from ._sessions import SessionRepairer, repair_session
    from ._writers import (
        WRITERS,
        awrite_anthropic,
        awrite_finetune,
        awrite_json_array,
        awrite_jsonl,
        awrite_responses,
        write_anthropic,
        write_finetune,
        write_json_array,
        write_jsonl,
        write_responses,
    )
    from ._writing import Encoder

__all__ = [
    "FORMATS",
    "ENCODERS",
    "Encoder",
    "WRITERS",
    "write_jsonl",
    "write_json_array",
    "write_finetune",
    "write_responses",
    "write_anthropic",
    "awrite_jsonl",
    "awrite_json_array",
    "awrite_finetune",
    "awrite_responses",
    "awrite_anthropic",
    "SESSION_FORMATS",
    "SessionRepairer",
    "repair_session",
    "detect_format",
    "read_messages",
    "aread_messages",
    "read_conversations",
    "aread_conversations",
    "Conversation",
    "MessageStream",
    "AsyncMessageStream",
    "ConversationStream",
    "AsyncConversationStream",
    "Position",
    "ChatConverter",
    "ResponsesConverter",
    "CodexConverter",
    "CodexPlan",
    "plan_codex",
    "ClaudeCodeConverter",
    "AnthropicConverter",
    "from_responses",
    "to_responses",
    "from_anthropic",
    "to_anthropic",
    "ShareGPTConverter",
    "FinetuneConverter",
]
