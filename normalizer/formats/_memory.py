"""In-memory conversions: Responses items and Anthropic messages to chat messages and back.

The file readers and writers work on bytes; an integration holds a list in memory (an OpenAI
Agents SDK session's items, a LiteLLM request's Anthropic ``messages``). These helpers drive
the same sans-I/O converters (``_responses``, ``_anthropic``) and encoders (``_writing``) over
such a list, so the in-memory forms are exactly what the files give:

* :func:`from_responses` / :func:`to_responses`: Responses input items <-> chat messages.
* :func:`from_anthropic` / :func:`to_anthropic`: Anthropic Messages (``messages`` plus the
  top-level ``system``) <-> chat messages.

Input is never modified (the converters copy what they keep). What a converter left out (an
item with no Chat form, a block with no Chat equivalent) is recorded in ``report`` when one
is given, whole, as the readers record it. The chat messages hold chat keys only; the fields
a converter keeps aside for the way back (an item's ``id`` and ``status``, a block's
``is_error``: ``source_fields``) come with them only when asked (``keep_source_fields=True``),
for ``to_responses`` / ``to_anthropic`` to restore, as the integrations do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._json import loads
from .._report import Report
from ._anthropic import AnthropicConverter
from ._anthropic_writer import AnthropicWriter
from ._common import without_source
from ._responses import ResponsesConverter
from ._responses_writer import ResponsesWriter
from ._writing import FormatWriter

__all__ = ["from_responses", "to_responses", "from_anthropic", "to_anthropic"]


def from_responses(
    items: Iterable[Any], *, report: Report | None = None, keep_source_fields: bool = False
) -> list[dict[str, Any]]:
    """OpenAI Responses input items (what a Responses request's ``input`` and an Agents SDK
    session hold) as chat messages: a message item and the calls after it are one assistant
    message, reasoning kept whole in ``reasoning_items``. ``keep_source_fields``: an item's
    fields with no chat equivalent (``id``, ``status``...) ride along under ``source_fields``
    for :func:`to_responses` to restore (not for a provider: chat has no such key).

    >>> from_responses([{"role": "user", "content": "hi"},
    ...                 {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}])
    [{'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'ls', 'arguments': '{}'}}]}]
    """
    converter = ResponsesConverter(report)
    out: list[dict[str, Any]] = []
    for item in items:
        out.extend(converter.feed(item))
    out.extend(converter.close())
    return out if keep_source_fields else [without_source(m) for m in out]


def to_responses(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """Chat messages as Responses input items, as :func:`normalizer.write_responses` writes
    them (reasoning items whole, one ``function_call`` per call, every assistant message item
    with an ``id``)."""
    return _records(ResponsesWriter(container="lines"), messages)


def from_anthropic(
    messages: Iterable[Any], *, system: Any = None, report: Report | None = None, keep_source_fields: bool = False
) -> list[dict[str, Any]]:
    """Anthropic Messages (``{"role", "content": blocks}``; ``system`` is the request's
    top-level one) as chat messages: ``tool_use`` blocks become ``tool_calls``, each
    ``tool_result`` block a tool message, thinking blocks kept whole in ``thinking_blocks``.
    ``keep_source_fields``: as :func:`from_responses` (a ``tool_result``'s ``is_error``...,
    for :func:`to_anthropic`).

    >>> from_anthropic([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], system="Be brief.")
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'hi'}]
    """
    converter = AnthropicConverter(report)
    out: list[dict[str, Any]] = []
    if system is not None:
        out.extend(converter.meta("system", system))
    for message in messages:
        out.extend(converter.feed(message))
    out.extend(converter.close())
    return out if keep_source_fields else [without_source(m) for m in out]


def to_anthropic(messages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Chat messages as the history keys of an Anthropic request, as
    :func:`normalizer.write_anthropic` writes them: ``messages``, and ``system`` when the chat
    starts with system messages (hoisted). Merge it into a request with ``request | ...``.

    >>> to_anthropic([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    {'system': 'Be brief.', 'messages': [{'role': 'user', 'content': 'hi'}]}
    """
    encoder = AnthropicWriter(container="object")
    data = b"".join([encoder.start(), encoder.begin({}), *map(encoder.message, messages), encoder.end(), encoder.finish()])
    request: dict[str, Any] = loads(data)  # (integers past 64 bits as the encoder wrote them)
    return {key: request[key] for key in ("system", "messages") if request.get(key) is not None}


def _records(encoder: FormatWriter, messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """What a one-record-per-line encoder writes, as the records themselves."""
    data = b"".join([encoder.start(), encoder.begin({}), *map(encoder.message, messages), encoder.end(), encoder.finish()])
    # orjson writes a newline inside a string as \n: every raw newline ends a record.
    return [loads(line) for line in data.splitlines()]
