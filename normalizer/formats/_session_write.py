"""The writing half of the in-format session repair (``_sessions.py``): each line goes out
with its ``parentUuid`` as the chain needs it (re-pointed past removed lines, at the line
written before it, or at what a moved result hung from: ``_chain``), and what it takes to
decide that is remembered here, bounded: the removed lines, the results moved up off a held
line, the parents named ahead, the last lines written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .._errors import LimitExceeded
from .._json import dumps
from .._report import Report
from . import _chain
from ._session_lines import Line

__all__ = ["ChainWriter", "MAX_REMOVED_LINES", "MAX_PARENTS_AHEAD"]

#: The most chain lines one session may have removed (results that answer no call), with the
#: results moved up off the line they hung from (see ``_chain.splice``): each is remembered
#: to the end of the file, its uuid and where its children go instead (about 120 bytes:
#: 1,000,000 of them are about 120 MB). No real session comes near it.
MAX_REMOVED_LINES: Final = 1_000_000

#: The most parents, named by Claude Code lines already written, that the repairer has not
#: seen written before them (a line written after its child, or a branch from further back
#: than the last ``_RECENT_LINES`` lines written; a result's own ``tool_use`` line is known
#: to be written). Each is remembered until a line of that uuid is written, so that it is not
#: removed (its child would be left hanging from nothing); one of a branch from far back is
#: remembered to the end (about 100 bytes each). Real sessions name a few.
MAX_PARENTS_AHEAD: Final = 1_000_000

#: How many of the last lines written the repairer remembers at least (their uuids; twice
#: as many at most), to tell a parent known to be written from one that may come later (see
#: MAX_PARENTS_AHEAD).
_RECENT_LINES: Final = 1024


@dataclass(frozen=True, slots=True)
class Splice:
    """Where the lines that hung from a result moved up off a held line hang instead."""

    above: str | None  # the line (None: none survives)
    number: int  # the result's line number: only lines after it are re-pointed


class ChainWriter:
    """Writes the lines and keeps the chain whole (a base of ``SessionRepairer``)."""

    report: Report
    source: str

    def _init_writer(self, n_out: int) -> None:
        self._n_out = n_out  # lines written (the report's counter: see SessionRepairer._count)
        # A late result moved up off a held line -> (that line, the result's line number):
        # the lines after it that hang from it hang from that line instead (_chain.splice).
        self._spliced: dict[str, Splice] = {}
        self._out_prev: str | None = None  # the chain line before, as written
        # Removed chain line -> the line its children hang from instead: the first line up
        # its chain that was not removed when it was (None: none was). One entry per removed
        # line, kept to the end on purpose: a later line may name any of them as its parent
        # (a branch, a progress line, a result hanging from its call), not only the last of
        # a run, and a line whose entry was evicted would be left pointing at nothing. Small,
        # then, but kept: its uuid and a pointer (the value is shared by a run of removed
        # lines), about 120 bytes, less than the line removed; at most MAX_REMOVED_LINES.
        self._removed: dict[str, str | None] = {}
        # Parents named by chain lines written that are not known to be written before them
        # (see MAX_PARENTS_AHEAD): a result of one of these uuids is not removed. Each goes
        # when a line of its uuid is written; one of a branch from far back stays.
        self._named: set[str] = set()
        # The uuids of the last lines written, in two generations of _RECENT_LINES at most
        # (the older let go when the newer fills): from _RECENT_LINES to twice that many.
        # (each with its parentUuid as written)
        self._recent: dict[str, str | None] = {}
        self._older: dict[str, str | None] = {}
        self._out = bytearray()
        self._unterminated = False  # the last line written had no newline (the file's last)

    def _splice(self, spliced: list[_chain.Spliced]) -> None:
        """Note late results moved up off the held lines they hung from (see
        :func:`._chain.splice`), once the held lines are written; bounded with the removed
        lines, and kept to the end as they are."""
        for one in spliced:
            self._bound(one.number)
            self._spliced[one.moved] = Splice(self._surviving(one.above), one.number)

    def _bound(self, number: int, removed: str | None = None) -> None:
        if len(self._removed) + len(self._spliced) >= MAX_REMOVED_LINES and (removed is None or removed not in self._removed):
            raise LimitExceeded(
                f"more than {MAX_REMOVED_LINES} lines of this session's chain would be removed (tool results "
                "that answer no call), each remembered to the end of the file for the lines that hang from it",
                limit="MAX_REMOVED_LINES", value=MAX_REMOVED_LINES, source=self.source, line=number,
                hint="No real session has this many; check that the file is one session, not several joined",
            )

    def _remove(self, removed: str, parent: str | None, number: int) -> None:
        """Note a removed chain line: its children will hang from the line ``parent`` stands
        for. Stored resolved, so that a chain of removed lines (orphan results one after the
        other) costs one step per line, not one per line before it."""
        self._bound(number, removed)
        new = self._surviving(parent)
        # Its own chain leads back to it (a line that is its own parent, or a loop of removed
        # lines): nothing above it survives, and pointing at itself would be a loop to walk.
        self._removed[removed] = None if new == removed else new

    def _known(self, parent: str | None) -> bool:
        """``parent`` is one of the recent lines written (None: no line)."""
        return parent is None or parent in self._recent or parent in self._older

    def _name_ahead(self, parent: str, number: int) -> None:
        """Note a parent that a line written names, not known to be written before it (see
        ``_named``)."""
        named = self._named
        if parent in named:
            return
        if len(named) >= MAX_PARENTS_AHEAD:
            raise LimitExceeded(
                f"more than {MAX_PARENTS_AHEAD} lines of this session's chain hang from a line not known to be written "
                "before them (not the line before them, nor their own tool_use line: a line written after them, or a "
                "branch from far back), each remembered until that line is written so that it is not removed",
                limit="MAX_PARENTS_AHEAD", value=MAX_PARENTS_AHEAD, source=self.source, line=number,
                hint="No real session has this many; check that the file is one session, not several joined",
            )
        named.add(parent)

    def _surviving(self, parent: str | None) -> str | None:
        """``parent``, or, if that line was removed, the line its children hang from instead.

        An entry names a line that was not removed when it was stored, but that line may be
        removed since (a parentUuid that names a later line): then the walk goes on, and
        every entry it passed is pointed at the end of it (path compression), so a line
        walked once is one step from then on. No entry points at a removed line that leads
        back to it (see ``_remove``): the walk ends.
        """
        removed = self._removed
        if parent is None or parent not in removed:
            return parent
        new = removed[parent]
        if new is None or new not in removed:
            return new
        path = [parent]
        while new is not None and new in removed:
            path.append(new)
            new = removed[new]
        for passed in path:
            removed[passed] = new
        return new

    # -- writing --------------------------------------------------------------------------------

    def _repoint(self, line: Line, new: str | None) -> None:
        info = line.info
        if line.synthetic is not None:
            line.value["parentUuid"] = new
            line.body = dumps(line.value)
        else:
            old = info.parent
            line.body = _chain.repointed(line.body, line.parsed(), new)
            self.report.add("repoint_parent", f"line {line.number}: parentUuid {old} -> {new}, so the chain from the last line stays whole",
                            line=line.number, output=self._n_out, dropped={"parentUuid": old})
        info.parent = new

    def _emit(self, line: Line) -> None:
        info = line.info
        if info.chain:
            new = info.parent
            named = self._named
            moved = self._spliced.get(new) if self._spliced and new is not None else None
            if moved is not None and line.number > moved.number:
                new = self._surviving(moved.above)  # it hung from a result that moved up: see _chain.splice
            elif line.linear and not (named and info.uuid in named and self._known(new)) and _chain.between(self._out_prev, new, self._recent, self._older):
                new = self._out_prev
            else:
                # (a line that a line already written hangs from keeps its parent, when that is
                # written: the line before it may be that child, or hang from it: a loop)
                new = self._surviving(new)
                if new is not None and line.synthetic is None and not (line.back and new == info.parent) and not self._known(new):
                    self._name_ahead(new, line.number)
            if new != info.parent:
                self._repoint(line, new)
            self._out_prev = info.uuid
        elif info.parent is not None and info.parent in self._removed:
            self._repoint(line, self._surviving(info.parent))  # (a line of another thread: it hung from a line removed)
        elif info.parent is not None and not self._known(info.parent):
            self._name_ahead(info.parent, line.number)  # (a line of no thread yet, or of another: untouched)
        if info.uuid is not None:
            # Written: no longer a parent named ahead; one of the recent lines.
            if self._named:
                self._named.discard(info.uuid)
            recent = self._recent
            recent[info.uuid] = info.parent
            if len(recent) >= _RECENT_LINES:
                self._older, self._recent = recent, {}
        record = line.record
        if record is not None:
            self.report.add(record.kind, record.detail, line=line.number, output=self._n_out)
        if self._unterminated:
            self._out += b"\n"  # a last line without a newline is no longer the last
        self._out += line.body + line.end
        self._unterminated = line.end == b""
        self._n_out += 1
