"""A repair made to a message that is not emitted yet: :class:`Note` (re-exported by
``_report``, where the records it becomes are kept).

A module of its own so that the optional compiled build (mypyc) compiles it: the core and
the profile stage make a note for every repair, and building an interpreted object from
compiled code costs more than the rest of a repair. (``_report`` holds a pydantic model,
no business of a compiled module.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

__all__ = ["Note"]


@final
class Note:
    """A repair made to a message that is not emitted yet: it becomes a ``Repair`` record
    once the message's output index is known (or none, if it is dropped).

    A slotted class, not a NamedTuple: one is made for every repair, and a NamedTuple's
    ``__new__`` costs about half again as much (compiled, this is a native class).
    """

    __slots__ = ("kind", "detail", "inputs", "dropped")

    kind: str
    """The repair kind (``Repair.kind``)."""
    detail: str | Callable[[], str]
    """A short sentence for people (``Repair.detail``), or a function that makes it
    (:meth:`text`). A sentence that formats values (reprs of ids, joined field names) is
    given as a function: past ``max_records`` with no ``on_record`` listener a note is
    only counted, no record is built, and a long history would otherwise format most of
    its sentences to throw them away (``rewrite_call_id`` costs ~6,800 instructions to
    format, deferring it ~1,200). On a path that runs per message the function is a
    ``functools.partial`` of a template's ``format`` (or of a module function) with its
    values, not a ``lambda``: a lambda turns the names it reads into cells, made on every
    call of the enclosing function whether a note is made or not (~1% of anthropic's
    run). Either way the function runs when the record is built, later than the note is
    made (after the profile stage, which may hold the message): what it reads must stay
    as it is -- a lambda's names not rebound afterwards, no object mutated."""
    inputs: list[int]
    """Input indices of the messages involved (``Repair.input``)."""
    dropped: Any
    """What was removed or overwritten, whole (``Repair.dropped``), else None."""

    def __init__(self, kind: str, detail: str | Callable[[], str], inputs: list[int], dropped: Any) -> None:
        self.kind = kind
        self.detail = detail
        self.inputs = inputs
        self.dropped = dropped

    def text(self) -> str:
        """The detail as the record's ``Repair.detail``: the sentence, made now if lazy."""
        detail = self.detail
        return detail if isinstance(detail, str) else detail()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Note):
            return NotImplemented
        return (self.kind, self.detail, self.inputs, self.dropped) == (
            other.kind, other.detail, other.inputs, other.dropped
        )

    __hash__ = None  # type: ignore[assignment]  # mutable fields: as a dataclass with eq

    def __repr__(self) -> str:
        return f"Note({self.kind!r}, {self.detail!r}, {self.inputs!r}, {self.dropped!r})"
