"""normalizer._note: the Note a repair makes before its message's output index is known."""

from __future__ import annotations

from functools import partial

import pytest

from normalizer._note import Note
from normalizer._report import Note as ReportNote, Report


def test_a_note_is_a_value_with_its_four_fields() -> None:
    note = Note("merge_assistant", "merged 1-2", [1, 2], None)
    assert (note.kind, note.detail, note.inputs, note.dropped) == ("merge_assistant", "merged 1-2", [1, 2], None)
    assert note == Note("merge_assistant", "merged 1-2", [1, 2], None)
    assert note != Note("merge_assistant", "merged 1-2", [1, 2], {"content": ""})
    assert note != ("merge_assistant", "merged 1-2", [1, 2], None)  # not a tuple
    assert repr(note) == "Note('merge_assistant', 'merged 1-2', [1, 2], None)"
    with pytest.raises(TypeError):
        hash(note)  # mutable fields (a list): unhashable, as a dataclass with eq
    with pytest.raises(AttributeError):
        note.extra = 1  # type: ignore[attr-defined]  # slotted


def test_text_is_the_sentence_made_when_lazy() -> None:
    assert Note("k", "said", [0], None).text() == "said"
    assert Note("k", partial("call {!r} had no result".format, "c1"), [0], None).text() == "call 'c1' had no result"


def test_the_report_module_re_exports_it() -> None:
    assert ReportNote is Note
    report = Report()
    report.add_notes([Note("k", partial(str, "lazy"), [3], {"x": 1})], 7)
    assert [(r.kind, r.detail, r.input, r.output, r.dropped) for r in report.records] == [("k", "lazy", [3], 7, {"x": 1})]


def test_notes_are_filed_into_the_fields_the_report_holds_now() -> None:
    """file_notes reads the report's fields per call (as dict items): a field its holder
    reassigned since is the one written."""
    from normalizer._note import file_notes
    from normalizer._report import Repair

    report = Report(max_records=1)
    file_notes(report.__dict__, [Note("a", "one", [0], None), Note("b", "two", [1], None)], 4, Repair)
    assert report.counts == {"a": 1, "b": 1} and report.records_omitted == 1
    assert [(r.kind, r.output) for r in report.records] == [("a", 4)]
    report.counts = {}
    report.records = []
    seen: list[Repair] = []
    report.on_record = seen.append
    report.add_notes([Note("c", "three", [2], None)], None)
    assert report.counts == {"c": 1} and [r.kind for r in report.records] == ["c"] and [r.kind for r in seen] == ["c"]
