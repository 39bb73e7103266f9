"""What a repair changed, kept as data.

A :class:`Report` holds a count per repair kind and one :class:`Repair` record per change.
Anything a repair removed (a message, a tool call, a value overwritten by a merge) is kept
whole in the record's ``dropped`` field, so nothing the input held is lost without a trace.

Records are the one buffer that grows with the number of *defects* (not messages). It is
bounded by ``max_records`` (default :data:`DEFAULT_MAX_RECORDS`); past it, records still
count and still reach the ``on_record`` callback, but are no longer kept in memory
(``records_omitted`` says how many). Callers who must keep every record of a huge input
pass ``on_record`` (the CLI streams them to ``--report``).

A record is a small slotted dataclass, not a pydantic model: a defect-heavy history makes a
record every few messages, and a model costs ~2.7 us to build against ~0.5 us for this.
The report around them is a pydantic model, which serializes them as objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from ._defaults import DEFAULT_MAX_RECORDS
from ._note import Note, file_notes

__all__ = ["Note", "Repair", "Report", "DEFAULT_MAX_RECORDS", "new_report"]


def _new_list() -> list[Any]:
    # The default factory of the list fields below: a Python function, not the type `list`.
    # Building the report's schema, pydantic asks each factory's signature whether it takes
    # the validated data; for a builtin type that means tokenizing its text signature, which
    # compiles tokenize's regular expressions (~14M instructions, ~5 ms of every start-up)
    # for this alone. (`dict` has no text signature: it is answered at once.)
    return []



@dataclass(slots=True)
class Repair:
    """One change made to the stream (a value: the library never changes one once made)."""

    kind: str
    """Machine-readable repair kind, e.g. ``"merge_assistant"`` or ``"drop_orphan_result"``."""
    detail: str
    """A short sentence for people: what changed and why."""
    input: list[int] = field(default_factory=_new_list)
    """0-based indices of the input messages involved (empty for synthetic-only changes)."""
    output: int | None = None
    """0-based index of the resulting message in the output, where there is one."""
    dropped: Any = None
    """What was removed, whole (a message, a tool call, an overwritten value), else None."""
    line: int | None = None
    """1-based line in the source file, for repairs/skips made while reading a file."""

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """The record as a dict (pydantic's spelling, kept from when this was a model)."""
        return dataclasses.asdict(self)


class Report(BaseModel):
    """Counts per repair kind and a record per repair. ``model_dump_json()`` works, always:
    a lone surrogate (in-memory input can hold one; files cannot, see ``normalizer.formats._records``)
    cannot be encoded as UTF-8, so the dump replaces each with U+FFFD and says so in a
    ``replace_surrogates`` record of the dump (the report itself is left as it is)."""

    # Built when first validated or dumped, not at import: the library makes its reports
    # with new_report(), which needs no schema, so start-up does not pay for it (~7 ms).
    model_config = ConfigDict(defer_build=True)

    messages_in: int = 0
    messages_out: int = 0
    format: str | None = None
    """The format of the file read (``"chat"``, ``"codex"``...), set by the reader once it
    is given or detected; None for a report no reader filled. An attribute of the input,
    not a repair: it is not counted, so it does not make ``changed`` true."""
    counts: dict[str, int] = Field(default_factory=dict)
    records: list[Repair] = Field(default_factory=_new_list)
    records_omitted: int = 0
    max_records: int = DEFAULT_MAX_RECORDS
    on_record: Callable[[Repair], None] | None = Field(default=None, exclude=True, repr=False)
    """Called with every record as it is made (not part of the dumped report)."""

    @property
    def changed(self) -> bool:
        """True when any repair was made (skips while reading count too)."""
        return bool(self.counts)

    def add(
        self,
        kind: str,
        detail: str,
        *,
        input: list[int] | None = None,
        output: int | None = None,
        dropped: Any = None,
        line: int | None = None,
    ) -> Repair:
        """Record one repair and return its record."""
        record = Repair(kind, detail, input or [], output, dropped, line)
        counts = self.counts
        counts[kind] = counts.get(kind, 0) + 1
        records = self.records
        if len(records) < self.max_records:
            records.append(record)
        else:
            # Straight into the field: pydantic's __setattr__ costs ~0.4 us, per omitted record.
            self.__dict__["records_omitted"] += 1
        if self.on_record is not None:
            self.on_record(record)
        return record

    def add_notes(self, notes: list[Note], output: int | None) -> None:
        """``add`` each note of one message (output index ``output``): the same counts,
        records and callbacks. Once the kept records are full and nobody listens, a note
        is only counted -- no record is built to be thrown away, and a lazy detail is
        never made (a long history with a repair per message spends most of its notes
        there)."""
        file_notes(self.__dict__, notes, output, Repair)

    def model_dump_json(self, **kwargs: Any) -> str:  # pydantic's keywords, passed through
        try:
            return super().model_dump_json(**kwargs)
        except PydanticSerializationError:
            replaced = [0]
            data = _fields(self)
            data["records"] = [dataclasses.asdict(r) for r in self.records]
            data = _replace_surrogates(data, replaced)
            if not replaced[0]:
                raise  # not surrogates: a value that is not JSON at all, the caller's to fix
        note = Repair(
            kind="replace_surrogates",
            detail=f"{replaced[0]} lone surrogate(s) (half of a UTF-16 pair: not a character, "
            "cannot be written as UTF-8) replaced by U+FFFD in this dump",
        )
        data["records"].append(dataclasses.asdict(note))
        data["counts"]["replace_surrogates"] = 1
        clean = Report.model_validate(data)
        return BaseModel.model_dump_json(clean, **kwargs)

    def count(self, kind: str, n: int = 1) -> None:
        """Count something without a record (e.g. skipped sidechain lines of a session file)."""
        self.counts[kind] = self.counts.get(kind, 0) + n

    def summary(self) -> str:
        """One line for people: ``"12 in, 10 out; merge_assistant 2, stub_missing_result 1"``."""
        kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(self.counts.items()))
        return f"{self.messages_in:,} in, {self.messages_out:,} out; " + (kinds or "no repairs")


def new_report(max_records: int = DEFAULT_MAX_RECORDS, on_record: Callable[[Repair], None] | None = None) -> Report:
    """An empty report, as the library makes one: ``Report(max_records=..., on_record=...)``
    without the validation (its values are the library's own, already of their types)."""
    # Every field given: pydantic fills a missing one through its default's machinery,
    # which asks each default factory's signature (inspect) -- 15 us a report against 3,
    # paid per file by the CLI (twice: the reader's report and the core's). The fields set
    # are those Report(max_records=..., on_record=...) sets (a set of its own: pydantic adds
    # to it when a field is assigned).
    return Report.model_construct(
        {"max_records", "on_record"}, messages_in=0, messages_out=0, format=None, counts={}, records=[],
        records_omitted=0, max_records=max_records, on_record=on_record,
    )


def _replace_surrogates(value: Any, replaced: list[int]) -> Any:
    """``value`` with every lone surrogate of its strings (keys too) replaced by U+FFFD;
    ``replaced[0]`` counts them."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            lone = sum(1 for c in value if 0xD800 <= ord(c) <= 0xDFFF)
            replaced[0] += lone
            return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, dict):
        return {_replace_surrogates(k, replaced): _replace_surrogates(v, replaced) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_replace_surrogates(v, replaced) for v in value]
    return value


def _fields(model: BaseModel) -> dict[str, Any]:
    """A model's fields as they are: not through pydantic's serializer, which refuses the
    very strings this is for."""
    return {name: getattr(model, name) for name, info in type(model).model_fields.items() if not info.exclude}
