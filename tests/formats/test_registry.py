"""The formats are listed once (``formats._registry``): what is keyed by a format's name derives
from that list, and the docs' table of formats (docs/formats.md) lists exactly its formats."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import normalizer
from normalizer import formats
from normalizer.formats import _detect, _reader, _registry
from normalizer.formats._format import Clue, Evidence, Format

README = Path(__file__).resolve().parents[2] / "docs" / "formats.md"


def test_the_registry_s_order_is_the_order_users_see() -> None:
    assert [f.name for f in _registry.REGISTRY] == [
        "chat", "responses", "codex", "claude-code", "gemini-cli", "opencode", "anthropic", "gemini", "sharegpt", "finetune",
    ]
    assert _registry.INPUT_FORMATS == tuple(f.name for f in _registry.REGISTRY)
    assert len(set(_registry.INPUT_FORMATS)) == len(_registry.INPUT_FORMATS)


def test_the_tables_derive_from_the_registry() -> None:
    assert formats.FORMATS is _registry.FORMATS is _reader.FORMATS
    assert formats.FORMATS == {f.name: f.converter for f in _registry.REGISTRY}
    outputs = sorted((o for f in _registry.REGISTRY for o in f.outputs), key=lambda o: o.rank)
    assert formats.ENCODERS is _registry.ENCODERS
    assert formats.ENCODERS == {o.name: o.writer for o in outputs if o.writer is not None}
    assert list(formats.ENCODERS) == ["jsonl", "json", "finetune", "responses", "anthropic", "gemini"]
    assert formats.SESSION_FORMATS is _registry.SESSION_FORMATS is _detect.SESSION_FORMATS
    assert formats.SESSION_FORMATS == tuple(o.name for o in outputs if o.dialect is not None) == ("claude-code", "codex", "gemini-cli")
    assert _registry.OUTPUT_FORMATS == (*formats.ENCODERS, *formats.SESSION_FORMATS)
    assert list(formats.WRITERS) == list(formats.ENCODERS)
    assert _reader.READER_OPTIONS == {"keep_sidechains": "claude-code", "keep_meta": "claude-code", "base_instructions": "codex",
                                      "session": "opencode"}


def test_each_output_rank_and_name_is_its_own() -> None:
    outputs = [o for f in _registry.REGISTRY for o in f.outputs]
    assert len({o.name for o in outputs}) == len(outputs)
    assert len({o.rank for o in outputs}) == len(outputs)
    for o in outputs:
        assert (o.writer is None) != (o.dialect is None)
        assert o.writer is None or o.writer.name == o.name


def test_each_session_format_names_its_dialect_in_the_session_editor() -> None:
    from normalizer.formats._session_lines import Dialect

    for f in _registry.REGISTRY:
        dialect = f.session_dialect()
        assert (dialect is None) == (f.name not in formats.SESSION_FORMATS)
        if dialect is not None:
            named = next(o.dialect for o in f.outputs if o.dialect is not None)
            assert dialect.name == f.name
            assert issubclass(dialect, Dialect)
            assert f"{dialect.__module__}.{dialect.__name__}" == f"normalizer.formats.{named}"


def test_each_converter_knows_its_name() -> None:
    for f in _registry.REGISTRY:
        assert f.converter.name == f.name  # type: ignore[attr-defined]


# -- detection ---------------------------------------------------------------------------------------

RECORDS: list[tuple[Any, _detect.Guess]] = [
    ({"type": "response_item", "payload": {}}, _detect.Guess("codex", True)),
    ({"type": "user", "uuid": "u", "message": {}}, _detect.Guess("claude-code", True)),
    ({"conversations": [], "messages": []}, _detect.Guess("sharegpt", True)),
    ({"messages": [], "role": "user"}, _detect.Guess("finetune", True)),
    ({"type": "message", "role": "user", "content": [{"type": "tool_result"}], "messages": 1}, _detect.Guess("responses", True)),
    ({"role": "user", "content": [{"type": "input_text"}, {"type": "tool_result"}]}, _detect.Guess("anthropic", True)),
    ({"role": "user", "content": [{"type": "image", "source": {}}, {"type": "input_text"}]}, _detect.Guess("anthropic", True)),
    ({"role": "user", "content": [{"type": "input_text"}]}, _detect.Guess("responses", True)),
    ({"role": "tool", "content": "x"}, _detect.Guess("chat", True)),
    ({"role": "user", "content": "x", "tool_call_id": 1}, _detect.Guess("chat", True)),
    ({"role": "user", "content": "x"}, _detect.Guess("chat", False)),
    ({"role": 1, "content": "x"}, _detect.Guess(None, False)),
    ({"type": ["message"], "payload": 1}, _detect.Guess(None, False)),
    ([{"role": "user"}], _detect.Guess(None, False)),
    ("text", _detect.Guess(None, False)),
]


@pytest.mark.parametrize(("record", "verdict"), RECORDS)
def test_detection_asks_every_format_and_the_most_specific_clue_wins(record: Any, verdict: _detect.Guess) -> None:
    assert _detect.guess(record) == verdict


def test_detection_asks_the_registry_s_formats() -> None:
    assert _detect._ASKED is _registry.REGISTRY


def test_a_format_added_anywhere_in_the_list_is_asked_in_its_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    # What issue 37 found: a {"role": "model"} record was chat unless the new branch came first.
    def model(record: dict[str, Any]) -> Clue | None:
        return Clue(Evidence.PARTS) if record.get("role") == "model" and "parts" in record else None

    new = Format("gemini-like", object, model)
    others = tuple(f for f in _registry.REGISTRY if f.name != "gemini")  # (the real one, which is this)
    monkeypatch.setattr(_detect, "_ASKED", (*others, new))
    assert _detect.guess({"role": "model", "parts": []}) == _detect.Guess("gemini-like", True)
    assert _registry.BY_NAME["gemini"].guess({"role": "model", "parts": []}) is not None
    assert _detect.guess({"role": "user", "content": "x"}) == _detect.Guess("chat", False)


def test_the_error_names_the_formats_in_their_order() -> None:
    with pytest.raises(normalizer.InputError) as info:
        _detect.decide([_detect.NO_GUESS])
    assert info.value.hint == f"Name it with --from ({', '.join(_registry.INPUT_FORMATS)})"


# -- the docs -----------------------------------------------------------------------------------------


def _readme_formats() -> list[str]:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| `--from` | what it reads | one line |"):]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(re.match(r"\| `([^`]+)` \|", line).group(1))  # type: ignore[union-attr]
    return rows


def test_the_readme_s_table_lists_exactly_the_registry_s_formats_in_its_order() -> None:
    assert _readme_formats() == list(_registry.INPUT_FORMATS)
