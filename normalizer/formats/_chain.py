"""The parentUuid chain of a Claude Code session, where the in-format repair moves a line.

Claude Code rebuilds a conversation by walking ``parentUuid`` from the last line; a line the
walk does not reach is not sent on resume. When a late result moves up to its call it must
take its place on that chain, not only in the file (:func:`splice`); a line re-pointed at
the line written before it must not cut its old parent off (:func:`between`); and a line
re-pointed keeps every other byte (:func:`repointed`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._json import JSONDecodeError, dumps, loads


class _Info(Protocol):
    @property
    def chain(self) -> bool: ...
    @property
    def uuid(self) -> str | None: ...
    @property
    def parent(self) -> str | None: ...


class _Line(Protocol):
    @property
    def info(self) -> _Info: ...
    @property
    def number(self) -> int: ...
    linear: bool


@dataclass(frozen=True, slots=True)
class Spliced:
    """A late result moved up off the held line it hung from (see :func:`splice`)."""

    moved: str  # its uuid
    above: str  # the line its later children hang from instead
    number: int  # its line number (only lines after it are re-pointed)


def splice(held: Sequence[_Line], moved: Sequence[_Line]) -> list[Spliced]:
    """Take the late results ``moved`` out of the chain where they were and put them after
    their call, before the ``held`` lines (those they came after in the file).

    A result that hung from a held line (the user's message written between the call and
    its result: ``a1 <- u2 <- r1 <- a2``) would, moved up and still hanging from it, be a
    branch of its own, and so would everything above it: Claude Code would send neither the
    call, its result nor the message. Such a result hangs from the line written before it
    instead (its call, or the result before it: it is marked ``linear``); the lines that
    hung from it and come after it in the file hang from the line it hung from (``a2`` from
    ``u2``: see ``SessionRepairer._splice``); the held line that hung from the call hangs
    from the results (see ``SessionRepairer._resolve``). The chain is then
    ``a1 <- r1 <- u2 <- a2``: every message it carried, the result right after its call.

    Returns each such result (:class:`Spliced`).
    """
    inside = {line.info.uuid for line in held if line.info.chain and line.info.uuid is not None}
    out: list[Spliced] = []
    top: dict[str, str] = {}  # a moved result -> the held line at the end of its run of moved results
    for line in moved:
        info = line.info
        if not info.chain or info.uuid is None or info.parent is None:
            continue
        above = info.parent if info.parent in inside else top.get(info.parent)
        if above is None:
            continue  # it hangs from its call (or a line above it): it stays as it hangs
        line.linear = True
        top[info.uuid] = above
        out.append(Spliced(info.uuid, above, line.number))
    return out


def between(at: str | None, parent: str | None, recent: Mapping[str, str | None], older: Mapping[str, str | None]) -> bool:
    """Whether the lines written since ``parent`` (the line before this one in the file) went
    in between them: ``at``, the line written last, descends from it (walked up ``recent``
    and ``older``, the last lines written and their parents), or it is not written (removed,
    or further on). Else ``parent`` is written on a chain of its own that ``at`` does not
    lead to (a result written before the result it hangs from, which moved up): re-pointed
    at ``at``, the line would cut ``parent`` off the chain."""
    if at == parent or parent is None or not (parent in recent or parent in older):
        return True
    for _ in range(len(recent) + len(older)):
        if at is None:
            return False
        at = recent[at] if at in recent else older.get(at)
        if at == parent:
            return True
    return False


def repointed(body: bytes, value: dict[str, Any], parent: str | None) -> bytes:
    """The line's bytes with only its ``parentUuid`` changed: spliced in place when the old
    value stands once (Claude Code writes it first), else the line written anew."""
    old = b'"parentUuid":' + dumps(value.get("parentUuid"))
    new = b'"parentUuid":' + dumps(parent)
    if body.count(old) == 1:
        candidate = body.replace(old, new)
        try:
            if loads(candidate) == {**value, "parentUuid": parent}:
                return candidate
        except JSONDecodeError:
            pass
    return dumps({**value, "parentUuid": parent})
