"""Files in, chat messages (or conversations) out: the readers behind the public API.

:class:`_Pipeline` is the sans-I/O part: records in (from :mod:`normalizer.formats._records`), detection,
the converter, skip-or-raise, and outputs out. The sync and async readers only pump it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Union

from .._errors import InputError, UsageError
from ._records import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_RECORD_BYTES,
    OnInvalid,
    Record,
    Source,
    aiter_raw_lines,
    aiter_records,
    aopen_source,
    iter_raw_lines,
    iter_records,
    open_source,
)
from .._report import Report
from ._chat import ChatConverter, FinetuneConverter, ShareGPTConverter
from ._claude import AnthropicConverter, ClaudeCodeConverter
from ._codex import CodexConverter, CodexPlan, CodexPlanner, plan_codex
from ._detect import DETECT_RECORDS, detect_format, guess
from ._responses import ResponsesConverter

__all__ = [
    "FORMATS",
    "Conversation",
    "MessageStream",
    "AsyncMessageStream",
    "read_messages",
    "aread_messages",
    "read_conversations",
    "aread_conversations",
]

#: Format name -> converter class. Every class takes ``report`` as its first argument.
FORMATS: dict[str, Callable[..., Any]] = {
    "chat": ChatConverter,
    "responses": ResponsesConverter,
    "codex": CodexConverter,
    "claude-code": ClaudeCodeConverter,
    "anthropic": AnthropicConverter,
    "sharegpt": ShareGPTConverter,
    "finetune": FinetuneConverter,
}

# Reader options that belong to one converter. Given for another format, they do nothing.
_CONVERTER_OPTIONS = {
    "keep_sidechains": "claude-code",
    "keep_meta": "claude-code",
    "base_instructions": "codex",
}


@dataclass
class Conversation:
    """One conversation of a file.

    Attributes:
        messages: its chat messages: a list (multi-conversation files, where the record is
            already in memory) or a one-shot iterator (a whole-file session, streamed; consume
            it before asking for the next conversation).
        extra: the conversation's other keys (``tools``, ``parallel_tool_calls``, a
            document's top-level keys...), to be written back untouched. For a streamed
            document, keys that come after the messages are added once they are read.
        index: 0-based position of the conversation in the file.
        line: 1-based line of the record (JSONL), else None.
    """

    messages: Union[list[dict[str, Any]], Iterator[dict[str, Any]]]
    extra: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    line: int | None = None


# Pipeline outputs: ("msg", message) | ("conv", messages, extra, index, line) |
# ("meta", key, value) | ("side", messages)
_Out = tuple[Any, ...]


class _Pipeline:
    def __init__(self, fmt: str, source: str, report: Report, on_invalid: OnInvalid, options: dict[str, Any]) -> None:
        if fmt != "auto" and fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}")
        if on_invalid not in ("error", "skip"):
            raise UsageError(f"on_invalid must be 'error' or 'skip', not {on_invalid!r}")
        unknown = set(options) - set(_CONVERTER_OPTIONS)
        if unknown:
            raise UsageError(f"unknown reader option(s): {', '.join(sorted(unknown))}")
        self.source = source
        self.report = report
        self.on_invalid = on_invalid
        self.options = options
        self.format: str | None = None
        self.converter: Any = None
        self.pending_plan = False
        self._buffer: list[Record] = []
        self._meta_keys: set[str] = set()
        if fmt != "auto":
            self._choose(fmt)

    @property
    def multi(self) -> bool:
        return bool(getattr(self.converter, "multi", False))

    def _choose(self, fmt: str) -> None:
        self.format = fmt
        kwargs = {k: v for k, v in self.options.items() if _CONVERTER_OPTIONS[k] == fmt}
        self.converter = FORMATS[fmt](self.report, **kwargs)
        # Looked up once, not per record: _one runs for every line of the file.
        self._multi = self.multi
        self._feed = self.converter.feed
        self._take_sidechains = getattr(self.converter, "take_sidechains", None)
        # Codex history control needs a first pass; the driver provides it (or None).
        self.pending_plan = fmt == "codex"

    def set_plan(self, plan: CodexPlan | None) -> list[_Out]:
        self.pending_plan = False
        if plan is not None and not plan.empty:
            self.converter.plan = plan
        return self._replay()

    def push(self, rec: Record) -> list[_Out]:
        if self.converter is None or self.pending_plan:
            self._buffer.append(rec)
            if self.converter is None:
                self._try_detect(final=False)
            if self.converter is None or self.pending_plan:
                return []
            return self._replay()
        return self._one(rec)

    def finish(self) -> list[_Out]:
        out: list[_Out] = []
        if self.converter is None:
            self._try_detect(final=True)
        if self.pending_plan:
            return []  # the driver sets the plan, then calls finish() again
        out.extend(self._replay())
        out.extend(("msg", m) for m in self._located(self.converter.close, None, None))
        out.extend(self._sidechains())
        return out

    def _try_detect(self, *, final: bool) -> None:
        records = [r[1] for r in self._buffer if r[0] == "record"]
        self._meta_keys.update(r[1][0] for r in self._buffer if r[0] == "meta")
        decisive = any(guess(r)[1] for r in records)
        if not (decisive or final or len(records) >= DETECT_RECORDS):
            return
        hint = "system" if "system" in self._meta_keys else None
        try:
            fmt = detect_format(records, hint=hint)
        except InputError as exc:
            first = next((r for r in self._buffer if r[0] == "record"), None)
            raise exc.located(source=self.source, line=first[2] if first else None) from None
        self.report.count(f"format:{fmt}")
        self._choose(fmt)

    def _replay(self) -> list[_Out]:
        buffered, self._buffer = self._buffer, []
        out: list[_Out] = []
        for rec in buffered:
            out.extend(self._one(rec))
        return out

    def _one(self, rec: Record) -> list[_Out]:
        kind, value, line, index = rec
        if kind == "meta":
            key, val = value
            meta = getattr(self.converter, "meta", None)
            out: list[_Out] = [("meta", key, val)]
            if meta is not None:
                out.extend(("msg", m) for m in self._located(lambda: meta(key, val, line=line), value, line, index))
            return out
        if self._multi:
            try:
                messages, extra = self.converter.split(value, line=line)
            except InputError as exc:
                self._skip_or_raise(exc, value, line, index)
                return []
            return [("conv", messages, extra, index, line)]
        try:
            messages = self._feed(value, line=line)
        except InputError as exc:
            self._skip_or_raise(exc, value, line, index)
            return []
        out = [("msg", m) for m in messages]
        if self._take_sidechains is not None:
            out.extend(("side", conv) for conv in self._take_sidechains())
        return out

    def _sidechains(self) -> list[_Out]:
        take = getattr(self.converter, "take_sidechains", None)
        return [("side", conv) for conv in take()] if take is not None else []

    def _located(self, call: Callable[[], list[dict[str, Any]]], value: Any, line: int | None, index: int | None = None) -> list[dict[str, Any]]:
        try:
            return call()
        except InputError as exc:
            self._skip_or_raise(exc, value, line, index)
            return []

    def _skip_or_raise(self, exc: InputError, value: Any, line: int | None, index: int | None) -> None:
        if line is None and exc.index is None and index is not None:
            exc.index = index  # a document has no lines: say which record
        exc.located(source=self.source, line=line)
        if self.on_invalid != "skip":
            raise exc
        self.report.add("skip_invalid", str(exc), line=line, dropped=value)


# -- sync -------------------------------------------------------------------------------------


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


@dataclass(frozen=True)
class _Limits:
    """The reader's limits (see :mod:`normalizer.formats._records` for what each bounds and why)."""

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES


def _events(source: Source, fmt: str, report: Report, on_invalid: OnInvalid, limits: _Limits, options: dict[str, Any], state: dict[str, Any]) -> Iterator[_Out]:
    max_line_bytes = limits.max_line_bytes
    pipeline = _Pipeline(fmt, "<input>", report, on_invalid, options)
    f, name, owned = open_source(source)
    pipeline.source = name
    try:
        start = f.tell() if _seekable(f) else None

        def plan() -> CodexPlan | None:
            if start is None:
                return None
            here = f.tell()
            f.seek(start)
            try:
                return plan_codex(iter_raw_lines(f, name, max_line_bytes=max_line_bytes))
            finally:
                f.seek(here)

        records = iter_records(
            f, name, max_line_bytes=max_line_bytes, on_invalid=on_invalid, report=report,
            max_depth=limits.max_depth, max_record_bytes=limits.max_record_bytes,
        )
        if pipeline.pending_plan:
            yield from pipeline.set_plan(plan())
        for rec in records:
            out = pipeline.push(rec)
            if pipeline.pending_plan:
                out += pipeline.set_plan(plan())
            state["format"] = pipeline.format
            yield from out
        out = pipeline.finish()
        if pipeline.pending_plan:
            out = pipeline.set_plan(plan()) + pipeline.finish()
        state["format"] = pipeline.format
        yield from out
    finally:
        if owned:
            f.close()


class MessageStream(Iterator[dict[str, Any]]):
    """The chat messages of a file, one at a time.

    Attributes:
        report: skips and conversion notes (``format:<name>`` counts the detected format).
        format: the format read, once known (after the first message), else None.
    """

    def __init__(self, events: Iterator[_Out], report: Report, state: dict[str, Any]) -> None:
        self.report = report
        self._state = state
        self._messages = _messages_only(events)

    @property
    def format(self) -> str | None:
        return self._state.get("format")

    def __iter__(self) -> MessageStream:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._messages)

    def close(self) -> None:
        self._messages.close()


def _messages_only(events: Iterator[_Out]) -> Generator[dict[str, Any], None, None]:  # close()d
    conversations = 0
    for ev in events:
        if ev[0] == "msg":
            yield ev[1]
        elif ev[0] == "conv":
            conversations += 1
            if conversations > 1:
                raise InputError(
                    "this file holds several conversations",
                    line=ev[4],
                    hint="Read it with read_conversations() (on the command line: --to finetune)",
                )
            yield from ev[1]
        # "meta" and "side" are not messages of the main conversation


def read_messages(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> MessageStream:
    """Stream the chat messages of a session or history file.

    Args:
        source: a path, ``"-"`` for stdin, or a binary file object.
        format: ``"auto"`` (detect from the first records) or a key of :data:`FORMATS`.
        report: where skipped records and conversion notes go (a new one if None).
        on_invalid: ``"error"`` raises on a bad line or record; ``"skip"`` leaves it out and
            records it (``skip_invalid``).
        max_line_bytes: longest JSONL line accepted.
        max_depth: deepest nesting accepted, in a JSONL line or a JSON document (counted
            from its outermost bracket); deeper input raises LimitExceeded where it is read.
        max_record_bytes: largest record of a JSON document, in bytes of the file.
        options: ``keep_meta`` (claude-code), ``base_instructions`` (codex).

    Returns:
        An iterator of message dicts with ``.report`` and ``.format``.

    Raises:
        InputError: bad input (with file, line and column where known), lone surrogate
            escapes included; LimitExceeded for an over-long line, an over-large document
            record or too deep a nesting; also for a file of several conversations (use
            :func:`read_conversations`).
        UsageError: an unknown format or option.
    """
    report = report if report is not None else Report()
    state: dict[str, Any] = {}
    # Validate arguments now, not at the first next().
    _Pipeline(format, "", report, on_invalid, options)
    return MessageStream(_events(source, format, report, on_invalid, _Limits(max_line_bytes, max_depth, max_record_bytes), options, state), report, state)


def read_conversations(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> Iterator[Conversation]:
    """Stream the conversations of a file: one per line of fine-tuning JSONL or ShareGPT
    record, else one for the whole file (plus, with ``keep_sidechains=True`` on a Claude
    Code session, one per sub-agent transcript, after the main one).

    Arguments as :func:`read_messages`, plus ``keep_sidechains`` (claude-code).
    """
    report = report if report is not None else Report()
    _Pipeline(format, "", report, on_invalid, options)
    state: dict[str, Any] = {}
    return _conversations(_events(source, format, report, on_invalid, _Limits(max_line_bytes, max_depth, max_record_bytes), options, state))


def _conversations(events: Iterator[_Out]) -> Iterator[Conversation]:
    extra: dict[str, Any] = {}
    sides: deque[list[dict[str, Any]]] = deque()
    head: list[dict[str, Any]] = []
    for ev in events:
        if ev[0] == "conv":
            yield Conversation(ev[1], ev[2], ev[3], ev[4])
            continue
        if ev[0] == "meta":
            extra[ev[1]] = ev[2]
            continue
        if ev[0] == "side":
            sides.append(ev[1])
            continue
        head.append(ev[1])
        break
    else:
        # Multi-conversation files end here; a single (empty or message-less) one too.
        if head or extra:
            yield Conversation(head, extra, 0, None)
        for i, side in enumerate(sides):
            yield Conversation(side, {"sidechain": True}, i + 1, None)
        return

    def main() -> Iterator[dict[str, Any]]:
        yield from head
        for ev in events:
            if ev[0] == "msg":
                yield ev[1]
            elif ev[0] == "meta":
                extra[ev[1]] = ev[2]
            elif ev[0] == "side":
                sides.append(ev[1])

    messages = main()
    yield Conversation(messages, extra, 0, None)
    for _ in messages:  # whatever the caller did not read still has to be read past
        pass
    for i, side in enumerate(sides):
        yield Conversation(side, {"sidechain": True}, i + 1, None)


# -- async ------------------------------------------------------------------------------------


async def _aseekable(f: Any) -> bool:
    wrapped = getattr(f, "wrapped", None)
    return _seekable(wrapped) if wrapped is not None else False


async def _aevents(source: Source, fmt: str, report: Report, on_invalid: OnInvalid, limits: _Limits, options: dict[str, Any], state: dict[str, Any]) -> AsyncIterator[_Out]:
    max_line_bytes = limits.max_line_bytes
    pipeline = _Pipeline(fmt, "<input>", report, on_invalid, options)
    f, name, owned = await aopen_source(source)
    pipeline.source = name
    try:
        start = await f.tell() if await _aseekable(f) else None

        async def plan() -> CodexPlan | None:
            if start is None:
                return None
            here = await f.tell()
            await f.seek(start)
            try:
                planner = CodexPlanner()
                async for line, raw in aiter_raw_lines(f, name, max_line_bytes=max_line_bytes):
                    planner.feed(line, raw)
                return planner.result()
            finally:
                await f.seek(here)

        if pipeline.pending_plan:
            for ev in pipeline.set_plan(await plan()):
                yield ev
        async for rec in aiter_records(
            f, name, max_line_bytes=max_line_bytes, on_invalid=on_invalid, report=report,
            max_depth=limits.max_depth, max_record_bytes=limits.max_record_bytes,
        ):
            out = pipeline.push(rec)
            if pipeline.pending_plan:
                out += pipeline.set_plan(await plan())
            state["format"] = pipeline.format
            for ev in out:
                yield ev
        out = pipeline.finish()
        if pipeline.pending_plan:
            out = pipeline.set_plan(await plan()) + pipeline.finish()
        state["format"] = pipeline.format
        for ev in out:
            yield ev
    finally:
        if owned:
            await f.aclose()


class AsyncMessageStream(AsyncIterator[dict[str, Any]]):
    """The async twin of :class:`MessageStream` (``async for``; ``await aclose()``)."""

    def __init__(self, events: AsyncIterator[_Out], report: Report, state: dict[str, Any]) -> None:
        self.report = report
        self._state = state
        self._messages = _amessages_only(events)

    @property
    def format(self) -> str | None:
        return self._state.get("format")

    def __aiter__(self) -> AsyncMessageStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        return await self._messages.__anext__()

    async def aclose(self) -> None:
        await self._messages.aclose()  # type: ignore[attr-defined]


async def _amessages_only(events: AsyncIterator[_Out]) -> AsyncIterator[dict[str, Any]]:
    conversations = 0
    async for ev in events:
        if ev[0] == "msg":
            yield ev[1]
        elif ev[0] == "conv":
            conversations += 1
            if conversations > 1:
                raise InputError(
                    "this file holds several conversations",
                    line=ev[4],
                    hint="Read it with aread_conversations() (on the command line: --to finetune)",
                )
            for m in ev[1]:
                yield m


def aread_messages(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> AsyncMessageStream:
    """The async twin of :func:`read_messages` (asyncio or trio, through anyio)."""
    report = report if report is not None else Report()
    _Pipeline(format, "", report, on_invalid, options)
    state: dict[str, Any] = {}
    return AsyncMessageStream(_aevents(source, format, report, on_invalid, _Limits(max_line_bytes, max_depth, max_record_bytes), options, state), report, state)


async def aread_conversations(
    source: Source,
    format: str = "auto",
    *,
    report: Report | None = None,
    on_invalid: OnInvalid = "error",
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    **options: Any,
) -> AsyncIterator[Conversation]:
    """The async twin of :func:`read_conversations`. A whole-file conversation's messages
    are an async iterator here; consume it before asking for the next conversation."""
    report = report if report is not None else Report()
    _Pipeline(format, "", report, on_invalid, options)
    events = _aevents(source, format, report, on_invalid, _Limits(max_line_bytes, max_depth, max_record_bytes), options, {})
    extra: dict[str, Any] = {}
    sides: deque[list[dict[str, Any]]] = deque()
    head: list[dict[str, Any]] = []
    single = False
    async for ev in events:
        if ev[0] == "conv":
            yield Conversation(ev[1], ev[2], ev[3], ev[4])
        elif ev[0] == "meta":
            extra[ev[1]] = ev[2]
        elif ev[0] == "side":
            sides.append(ev[1])
        else:
            head.append(ev[1])
            single = True
            break
    if not single:
        if head or extra:
            yield Conversation(head, extra, 0, None)
        for i, side in enumerate(sides):
            yield Conversation(side, {"sidechain": True}, i + 1, None)
        return

    async def main() -> AsyncIterator[dict[str, Any]]:
        for m in head:
            yield m
        async for ev in events:
            if ev[0] == "msg":
                yield ev[1]
            elif ev[0] == "meta":
                extra[ev[1]] = ev[2]
            elif ev[0] == "side":
                sides.append(ev[1])

    messages = main()
    yield Conversation(messages, extra, 0, None)  # type: ignore[arg-type]
    async for _ in messages:
        pass
    for i, side in enumerate(sides):
        yield Conversation(side, {"sidechain": True}, i + 1, None)
