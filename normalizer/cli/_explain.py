"""``chatnorm explain``: each repair as the messages before and after, side by side.

The input is read whole (explain is for a person looking at one session) and repaired with
every record kept. Records that produced the same output message are shown together, as
one change: the input messages they took (left) and the message that came out (right),
with each record's kind and sentence above. Records with no output message (a result
dropped, results reordered) show what was removed, which the report keeps whole.

rich draws the tables: coloured on a terminal, plain ASCII otherwise (``--no-color`` too),
so the output can be pasted into an issue or diffed.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import orjson

from ._text import error_text, printable, say
from .._core import Normalizer
from .._errors import InputError
from .._report import Repair, Report
from ..formats import Position, read_conversations
from ..profiles._profiles import Profile

__all__ = ["run_explain"]


def _shorten(value: Any, limit: int) -> Any:
    # Long tool outputs would drown the change; the repair itself never shortens anything.
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… (+{len(value) - limit} chars)"
    if isinstance(value, dict):
        return {k: _shorten(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v, limit) for v in value]
    return value


def _groups(records: list[Repair]) -> list[tuple[int | None, list[Repair]]]:
    """Records by output message, in output order; record-only ones after the change they
    follow (in report order)."""
    groups: list[tuple[int | None, list[Repair]]] = []
    by_output: dict[int, list[Repair]] = {}
    for rec in records:
        if rec.output is not None:
            if rec.output not in by_output:
                by_output[rec.output] = []
                groups.append((rec.output, by_output[rec.output]))
            by_output[rec.output].append(rec)
        else:
            groups.append((None, [rec]))
    return groups


def run_explain(path: str, *, fmt: str, profile: Profile, options: dict[str, Any], color: bool | None,
                width: int | None, max_chars: int) -> int:
    from rich import box
    from rich.console import Console, Group
    from rich.highlighter import JSONHighlighter
    from rich.table import Table
    from rich.text import Text

    name = "<stdin>" if path == "-" else path
    tty = sys.stdout.isatty()
    use_color = tty if color is None else color
    plain = io.StringIO() if not use_color else None
    console = Console(
        file=plain if plain is not None else sys.stdout, force_terminal=use_color, no_color=not use_color, highlight=False,
        width=width or (None if tty else 120), soft_wrap=False,
    )
    report = Report()
    conversations: list[tuple[list[dict[str, Any]], list[dict[str, Any]], Report, int | None]] = []
    try:
        stream = read_conversations(sys.stdin.buffer if path == "-" else path, fmt, report=report)
        for conv in stream:
            before: list[dict[str, Any]] = []
            places: list[Position | None] = []  # where each message came from, for errors
            for m in conv.messages:
                before.append(m)
                places.append(stream.position)
            core = Normalizer(profile, **options, max_records=1_000_000)
            after = []
            for i, m in enumerate(before):
                try:
                    after.extend(core.feed(m))
                except InputError as exc:
                    place = places[i]
                    if exc.line is None and exc.index == i and place is not None:
                        exc.located(line=place.line, column=place.column)
                    raise
            after.extend(core.close())
            conversations.append((before, after, core.report, conv.line))
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=name)
        say(f"error: {error_text(exc)}", err=True)
        return 1

    def show(message: Any) -> Any:
        # The message is data: JSON escapes C0 controls, printable() the rest (DEL, C1, bidi).
        data = _shorten(message, max_chars)
        if use_color:
            text = JSONHighlighter()(printable(json.dumps(data, indent=1, ensure_ascii=False, default=str)))
            text.no_wrap = True
            text.overflow = None
            return text
        return Text(printable(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()))

    total = 0
    for c, (before, after, core_report, line) in enumerate(conversations):
        if len(conversations) > 1:
            console.rule(f"conversation {c}" + (f" (line {line})" if line else ""), style="bold" if use_color else "")
        for output, records in _groups(core_report.records):
            total += 1
            inputs = sorted({i for rec in records for i in rec.input})
            kinds = printable(", ".join(dict.fromkeys(rec.kind for rec in records)))
            where = f"message{'s' if len(inputs) > 1 else ''} {_span(inputs)}" if inputs else "no input message"
            dropped = [rec.dropped for rec in records if rec.dropped is not None]
            if output is not None:
                where += f" → output {output}"
            elif dropped:
                where += " → removed"
            title = Text.assemble((f"#{total} ", "bold"), (kinds, "bold cyan" if use_color else ""), f"  ({where})")
            why = Text(printable("\n".join(f"• {rec.kind}: {rec.detail}" for rec in records)))
            table = Table(box=box.ROUNDED if use_color else box.ASCII, expand=True, show_lines=True,
                          title=title, title_justify="left", caption=why, caption_justify="left")
            table.add_column("before", ratio=1, overflow="fold")
            table.add_column("after", ratio=1, overflow="fold")
            left = [Text(f"[{i}]", style="dim") if use_color else Text(f"[{i}]") for i in inputs]
            left_items: list[Any] = []
            for label, i in zip(left, inputs):
                if 0 <= i < len(before):
                    left_items += [label, show(before[i])]
            if output is not None and 0 <= output < len(after):
                right: list[Any] = [Text(f"[{output}]"), show(after[output])]
            else:
                right = [Text("(no output message of its own)" if not dropped else "removed, kept in the report:")]
                right += [show(d) for d in dropped]
            table.add_row(Group(*left_items) if left_items else Text("(none)"), Group(*right))
            console.print(table)
            console.print()
        summary = core_report.summary()
        console.print(Text(printable(f"{name}: {summary}"), style="bold" if use_color else ""))
    if not conversations:
        console.print(Text(printable(f"{name}: no messages")))
    if plain is not None:
        # rich pads every line to the width; plain text should not carry that.
        out = sys.stdout
        for text_line in plain.getvalue().splitlines():
            out.write(text_line.rstrip() + "\n")
        out.flush()
    return 0


def _span(indices: list[int]) -> str:
    if len(indices) > 2 and indices == list(range(indices[0], indices[-1] + 1)):
        return f"{indices[0]}-{indices[-1]}"
    return ", ".join(map(str, indices))
