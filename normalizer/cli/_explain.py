"""``chatnorm explain``: each repair as the messages before and after, side by side.

The input is read whole (explain is for a person looking at one session) and repaired with
every record kept. Records that produced the same output message are shown together, as
one change: the input messages they took (left) and the message that came out (right),
with each record's kind and sentence above. Records with no output message (a result
dropped, results reordered) show what was removed, which the report keeps whole. A change
a profile makes after the core (``set_prefix``, a system message folded) has no input
message: its "before" is the core's own message, found by running the core alone; a
message the repair added says so.

The lines that differ are marked as a diff marks them (``-`` on the left, ``+`` on the
right, red and green on a terminal); long lines wrap, they are never cut. rich draws the
tables: coloured on a terminal, plain ASCII otherwise (``--no-color`` too), so the output can
be pasted into an issue or diffed. On a terminal the view goes through a pager (``$PAGER``,
else ``less``; ``--no-pager`` prints it).
"""

from __future__ import annotations

import difflib
import io
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import orjson

from ._text import error_text, printable, say
from .._core import Normalizer
from .._errors import InputError
from .._json import dumps
from .._report import Repair, Report, new_report
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


@dataclass(frozen=True, slots=True)
class _Group:
    """The records of one output message (``output`` None: a record of its own)."""

    output: int | None
    records: list[Repair]


def _groups(records: list[Repair]) -> list[_Group]:
    """Records by output message, in output order; record-only ones after the change they
    follow (in report order)."""
    groups: list[_Group] = []
    by_output: dict[int, list[Repair]] = {}
    for rec in records:
        if rec.output is not None:
            if rec.output not in by_output:
                by_output[rec.output] = []
                groups.append(_Group(rec.output, by_output[rec.output]))
            by_output[rec.output].append(rec)
        else:
            groups.append(_Group(None, [rec]))
    return groups


#: Records of a message the repair adds (it has no "before").
_ADDED = frozenset({"placeholder_continue", "placeholder_user", "bridge_assistant", "stub_missing_result"})


def _core_only(profile: Profile, options: dict[str, Any], messages: list[dict[str, Any]]) -> list[Any]:
    """What the core alone emits for ``messages`` (the profile's core options, no profile
    stage): the "before" of the changes a profile's stage makes, which have no input message."""
    if profile.name == "default":
        return []
    try:
        core = Normalizer("default", **{**profile.core_options(), **options}, max_records=0)
        out = []
        for m in messages:
            out.extend(core.feed(m))
        out.extend(core.close())
        return out
    except Exception:  # noqa: BLE001 - only an aid to the view; the real repair succeeded
        return []


@dataclass(frozen=True, slots=True)
class _Match:
    """A candidate alike enough to be the same message before a change (:func:`_closest`)."""

    index: int
    message: Any


def _closest(message: Any, candidates: list[Any], near: int) -> _Match | None:
    """The candidate most like ``message`` (same role, within a few places of ``near``), if
    it is alike enough to be the same message before a change."""
    target = dumps(message, 0, str).decode()
    best: tuple[float, int, Any] | None = None
    for k in range(max(near - 4, 0), min(near + 5, len(candidates))):
        other = candidates[k]
        if not isinstance(other, dict) or other.get("role") != getattr(message, "get", lambda _: None)("role"):
            continue
        ratio = difflib.SequenceMatcher(None, target, dumps(other, 0, str).decode()).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, k, other)
    return _Match(best[1], best[2]) if best is not None and best[0] >= 0.75 else None


@dataclass(frozen=True, slots=True)
class _Sides:
    """The two columns of a change, each line with its mark (:func:`_marked`)."""

    left: list[tuple[str, str]]
    right: list[tuple[str, str]]


def _marked(left: list[list[str]], right: list[list[str]]) -> _Sides:
    """Each side's lines with a mark: ``-`` a line of the left side that is not on the right,
    ``+`` the reverse, `` `` a line both have (difflib over the JSON lines of all the
    messages of a side; a message's ``[i]`` label is never matched)."""
    def flat(side: list[list[str]], tag: str) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        for block in side:
            out.append((block[0], True))  # the label
            out.extend((line, False) for line in block[1:])
        return out

    a, b = flat(left, "a"), flat(right, "b")
    keys_a = [f"\x00label{i}" if label else line for i, (line, label) in enumerate(a)]
    keys_b = [f"\x01label{i}" if label else line for i, (line, label) in enumerate(b)]
    same_a: set[int] = set()
    same_b: set[int] = set()
    for block in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_matching_blocks():
        same_a.update(range(block.a, block.a + block.size))
        same_b.update(range(block.b, block.b + block.size))
    marked_a = [(("" if label else " " if i in same_a else "-"), line) for i, (line, label) in enumerate(a)]
    marked_b = [(("" if label else " " if i in same_b else "+"), line) for i, (line, label) in enumerate(b)]
    return _Sides(marked_a, marked_b)


@dataclass(frozen=True, slots=True)
class _Explained:
    """One conversation, read and repaired whole: the messages read, the repaired ones, the
    core's report (every record) and the line the conversation starts on."""

    before: list[dict[str, Any]]
    after: list[Any]
    report: Report
    line: int | None


def _repair_all(path: str, fmt: str, profile: Profile, options: dict[str, Any],
                reader_options: dict[str, Any]) -> list[_Explained]:
    """Every conversation of ``path`` (``-``: stdin), read and repaired with every record
    kept. Raises InputError; a core error about a message gets the place it came from."""
    report = new_report()
    conversations: list[_Explained] = []
    stream = read_conversations(sys.stdin.buffer if path == "-" else path, fmt, report=report, **reader_options)
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
        conversations.append(_Explained(before, after, core.report, conv.line))
    return conversations


_STYLES = {"-": "red", "+": "green", " ": "", "": "dim"}


class _Tables:
    """The side-by-side tables of the changes (rich), one per output message changed."""

    def __init__(self, *, use_color: bool, max_chars: int, profile: Profile, options: dict[str, Any]) -> None:
        self.use_color = use_color
        self.max_chars = max_chars
        self.profile = profile
        self.options = options
        self.total = 0  # changes shown so far (they are numbered across conversations)
        self._core_out: list[Any] | None = None  # the conversation's core-only output, when needed

    def print_conversation(self, console: Any, conv: _Explained) -> None:
        self._core_out = None
        for group in _groups(conv.report.records):
            self.total += 1
            console.print(self._table(group.output, group.records, conv))
            console.print()

    def _lines_of(self, message: Any) -> list[str]:
        # The message is data: JSON escapes C0 controls, printable() the rest (DEL, C1, bidi).
        data = _shorten(message, self.max_chars)
        return printable(dumps(data, orjson.OPT_INDENT_2, str).decode()).splitlines()  # (integers past 64 bits too)

    def _column(self, marked: list[tuple[str, str]]) -> Any:
        from rich.text import Text

        text = Text()
        for n, (mark, line) in enumerate(marked):
            if n:
                text.append("\n")
            text.append(f"{mark} {line}" if mark else line, style=_STYLES[mark] if self.use_color else "")
        return text

    def _table(self, output: int | None, records: list[Repair], conv: _Explained) -> Any:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        inputs = sorted({i for rec in records for i in rec.input})
        kinds = printable(", ".join(dict.fromkeys(rec.kind for rec in records)))
        where = f"message{'s' if len(inputs) > 1 else ''} {_span(inputs)}" if inputs else "no input message"
        dropped = [rec.dropped for rec in records if rec.dropped is not None]
        if output is not None:
            where += f" → output {output}"
        elif dropped:
            where += " → removed"
        title = Text.assemble((f"#{self.total} ", "bold"), (kinds, "bold cyan" if self.use_color else ""), f"  ({where})")
        why = Text(printable("\n".join(f"• {rec.kind}: {rec.detail}" for rec in records)))
        table = Table(box=box.ROUNDED if self.use_color else box.ASCII, expand=True, show_lines=True,
                      title=title, title_justify="left", caption=why, caption_justify="left")
        table.add_column("before", ratio=1, overflow="fold")
        table.add_column("after", ratio=1, overflow="fold")
        sides = self._sides(output, records, inputs, dropped, conv)
        table.add_row(self._column(sides.left), self._column(sides.right))
        return table

    def _sides(self, output: int | None, records: list[Repair], inputs: list[int], dropped: list[Any],
               conv: _Explained) -> _Sides:
        before, after = conv.before, conv.after
        left = [[f"[{i}]", *self._lines_of(before[i])] for i in inputs if 0 <= i < len(before)]
        added = any(rec.kind in _ADDED for rec in records)
        if not left and not added and output is not None and 0 <= output < len(after):
            # A change of the profile's stage: its "before" is the core's message (no input index).
            if self._core_out is None:
                self._core_out = _core_only(self.profile, self.options, before)
            match = _closest(after[output], self._core_out, output)
            if match is not None:
                left = [[f"core output [{match.index}], before the {self.profile.name} profile's changes",
                         *self._lines_of(match.message)]]
        if output is not None and 0 <= output < len(after):
            right = [[f"[{output}]", *self._lines_of(after[output])]]
        elif dropped:
            right = [["removed, kept in the report:" if k == 0 else "", *self._lines_of(d)] for k, d in enumerate(dropped)]
        else:
            right = [["(no output message of its own)"]]
        sides = _marked(left, right)
        marked_left, marked_right = sides.left, sides.right
        if output is None and dropped:
            # Nothing came out: the left side is what went; the right shows it as the report keeps it.
            marked_left = [(mark and "-", line) for mark, line in marked_left]
            marked_right = [(mark and " ", line) for mark, line in marked_right]
        if not left:
            marked_left = [("", "(none: the repair added this message)" if output is not None
                            else "(what was removed is on the right)" if dropped else "(none)")]
        return _Sides(marked_left, marked_right)


def run_explain(path: str, *, fmt: str, profile: Profile, options: dict[str, Any], color: bool | None,
                width: int | None, max_chars: int, pager: bool = True, reader_options: dict[str, Any] | None = None) -> int:
    from rich.console import Console
    from rich.text import Text

    name = "<stdin>" if path == "-" else path
    tty = sys.stdout.isatty()
    use_color = (tty and not os.environ.get("NO_COLOR")) if color is None else color
    rendered = io.StringIO()
    console = Console(
        file=rendered, force_terminal=use_color, no_color=not use_color, highlight=False,
        width=width or (shutil.get_terminal_size((120, 30)).columns if tty else 120), soft_wrap=False,
    )
    try:
        conversations = _repair_all(path, fmt, profile, options, reader_options or {})
    except InputError as exc:
        if exc.source is None or exc.source in ("<input>", "<stream>"):
            exc.located(source=name)
        say(f"error: {error_text(exc)}", err=True)
        return 1
    tables = _Tables(use_color=use_color, max_chars=max_chars, profile=profile, options=options)
    for c, conv in enumerate(conversations):
        if len(conversations) > 1:
            console.rule(f"conversation {c}" + (f" (line {conv.line})" if conv.line else ""),
                         style="bold" if use_color else "")
        tables.print_conversation(console, conv)
        summary = conv.report.summary()
        console.print(Text(printable(f"{name}: {summary}"), style="bold" if use_color else ""))
    if not conversations:
        console.print(Text(printable(f"{name}: no messages")))
    # rich pads every line to the width; the text should not carry that.
    text = "".join(text_line.rstrip() + "\n" for text_line in rendered.getvalue().splitlines())
    if not (pager and tty and _page(text)):
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def _page(text: str) -> bool:
    """Show ``text`` in a pager (``$PAGER``, else ``less``) as git does: ``LESS=FRX`` when
    LESS is unset (quit if it fits on one screen, keep colours, leave the screen as it is).
    False when there is no pager to run (the caller prints instead)."""
    command = shlex.split(os.environ.get("CHATNORM_PAGER") or os.environ.get("PAGER") or "less")
    if not command or shutil.which(command[0]) is None:
        return False
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX")}
    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode("utf-8", "replace"))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the pager was quit before the end: that is the reader's choice
    proc.wait()
    return True


def _span(indices: list[int]) -> str:
    if len(indices) > 2 and indices == list(range(indices[0], indices[-1] + 1)):
        return f"{indices[0]}-{indices[-1]}"
    return ", ".join(map(str, indices))
