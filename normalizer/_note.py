"""A repair made to a message that is not emitted yet: :class:`Note` (re-exported by
``_report``), and :func:`file_notes`, which turns the notes of an emitted message into the
report's counts and records (``Report.add_notes``; the core calls it directly).

A module of its own so that the optional compiled build (mypyc) compiles it: the core and
the profile stage make a note for every repair and file it, and each was an interpreted
frame called from compiled code (compiling both cut the compiled core's instructions on the
defect-heavy benchmark workload by a fifth). ``_report`` holds a pydantic model, no business
of a compiled module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

__all__ = ["Note", "file_notes"]


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


def file_notes(fields: dict[str, Any], notes: list[Note], output: int | None, make_record: Callable[..., Any]) -> None:
    """``Report.add`` for each note of one message (output index ``output``): the same
    counts, records and callbacks. ``fields`` is the report's instance dict and
    ``make_record`` its record class (``Repair``, which this module cannot import: the
    report imports this module).

    Once the kept records are full and nobody listens, a note is only counted: no record
    is built to be thrown away, and a lazy detail is never made (a long history with a
    repair per message spends most of its notes there)."""
    # The fields as dict items, read per call: a pydantic model's attribute costs several
    # times a dict's item, and whoever holds the report may reassign a field (pydantic
    # writes it into this very dict).
    counts: dict[str, int] = fields["counts"]
    records: list[Any] = fields["records"]
    listener: Callable[[Any], None] | None = fields["on_record"]
    limit: int = fields["max_records"]
    room = limit - len(records)
    rest: list[Note] = []
    if listener is None and room < len(notes):
        # The kept records fill up in order, then the rest are only counted.
        if room > 0:
            notes, rest = notes[:room], notes[room:]
        else:
            notes, rest = [], notes
    for note in notes:  # (Report.add per note, spelled out: this runs per record built)
        kind = note.kind
        detail = note.detail
        record = make_record(kind, detail if isinstance(detail, str) else detail(), note.inputs or [], output,
                             note.dropped, None)
        counts[kind] = counts.get(kind, 0) + 1
        if len(records) < limit:  # (as add(): a listener may have added records meanwhile)
            records.append(record)
        else:
            fields["records_omitted"] += 1
        if listener is not None:
            listener(record)
    if rest:
        for note in rest:
            kind = note.kind
            counts[kind] = counts.get(kind, 0) + 1
        fields["records_omitted"] += len(rest)
