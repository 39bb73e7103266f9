"""Every writer's output is a fixed point of its own reader, repair and writer: (repair X
--to W) then (repair --from W --to W) gives the same bytes and says "no repairs"; and
``repair --check`` calls it clean. Over every ``--to`` choice (as the command declares
them), the bundled examples and hostile histories (null content, list content, a system
list, empty turns).

Issue 35, third round: --to anthropic wrote a lone system text block as a list, which a
second repair rewrote as a string while saying "no repairs" (and --check called clean);
--to responses wrote a null user content as ``"content": []``, which a second repair
rewrote as ``""``; a --to finetune line that kept a request's model and system could not be
read back with --from finetune (read as a request body).
"""

from __future__ import annotations

from pathlib import Path

import click
import orjson
import pytest

from normalizer.cli._main import cli, main
from normalizer.formats import ENCODERS, FORMATS, SESSION_FORMATS
from tests.cli.conftest import ROOT


def _to_choices() -> list[str]:
    repair = cli.commands["repair"]  # type: ignore[attr-defined]
    [option] = [p for p in repair.params if p.name == "to"]
    assert isinstance(option.type, click.Choice)
    return [c for c in option.type.choices if c != "auto"]


WRITERS = _to_choices()
#: The reader of each writer's output: the format of its name, chat for the chat writers.
READER = {w: "chat" if w in ("jsonl", "json") else w for w in WRITERS}
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".json", ".jsonl"))


def _lines(*messages: object) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages)


def _call(i: int) -> dict[str, object]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}


def _text(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


HOSTILE: dict[str, bytes] = {
    "null-content.jsonl": _lines({"role": "system", "content": "s"}, {"role": "user", "content": None},
                                 {"role": "assistant", "content": None}, {"role": "user", "content": None}),
    "list-content.jsonl": _lines({"role": "system", "content": _text("s1") + _text("s2")},
                                 {"role": "user", "content": _text("a") + _text("b")},
                                 {"role": "assistant", "content": _text("x")}),
    "one-block.jsonl": _lines({"role": "system", "content": _text("s")}, {"role": "user", "content": _text("u")},
                              {"role": "assistant", "content": _text("a")},
                              {"role": "system", "content": _text("later")}, {"role": "user", "content": "q"}),
    "system-list.jsonl": _lines({"role": "system", "content": "s"}, {"role": "system", "content": ""},
                                {"role": "developer", "content": [{"type": "text", "text": "d",
                                                                   "cache_control": {"type": "ephemeral"}}]},
                                {"role": "user", "content": "q"}),
    "empty-turns.jsonl": _lines({"role": "user", "content": ""}, {"role": "assistant", "content": ""},
                                {"role": "user", "content": []}, {"role": "assistant", "content": "ok"}),
    "tools.jsonl": _lines({"role": "user", "content": "q"}, _call(1),
                          {"role": "tool", "tool_call_id": "c1", "content": _text("r")}, _call(2),
                          {"role": "tool", "tool_call_id": "c2", "content": None}, {"role": "user", "content": None}),
}


def _repair(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    status = main(["repair", *map(str, args)])
    return status, capsys.readouterr().err


def test_the_writers_are_the_encoders_and_the_session_formats():
    assert WRITERS == [*ENCODERS, *SESSION_FORMATS]
    assert set(READER.values()) <= set(FORMATS)


@pytest.mark.parametrize("writer", WRITERS)
def test_each_writer_output_is_a_fixed_point_of_its_reader_repair_and_writer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str):
    inputs = list(EXAMPLES)
    for name, data in HOSTILE.items():
        (tmp_path / name).write_bytes(data)
        inputs.append(tmp_path / name)
    suffix = ".json" if writer in ("json", "anthropic") else ".jsonl"
    written = 0
    for src in inputs:
        first = tmp_path / f"first-{src.stem}{suffix}"
        status, err = _repair(capsys, "--to", writer, src, "-o", first)
        if writer in SESSION_FORMATS and status:
            assert "recognised" in err or "not JSON" in err, err  # another format's file: refused
            continue
        assert status == 0, (src.name, err)
        written += 1
        second = tmp_path / f"second-{src.stem}{suffix}"
        status, err = _repair(capsys, "--from", READER[writer], "--to", writer, first, "-o", second)
        assert status == 0, (src.name, err)
        assert "no repairs" in err, (src.name, err)
        assert second.read_bytes() == first.read_bytes(), src.name
        status, err = _repair(capsys, "--check", "--from", READER[writer], "--to", writer, first)
        assert status == 0, (src.name, err)
    assert written >= (1 if writer in SESSION_FORMATS else len(inputs))
