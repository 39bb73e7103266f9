"""Data printed as human text never reaches the terminal raw: escape sequences, C1 controls
and bidi overrides in call ids, file names and message contents are shown escaped, and
rich never reads them as markup. JSON output stays the data, byte for byte."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from normalizer.batch.text import printable
from tests.cli.conftest import EXAMPLE, jsonl, run, write_jsonl

EVIL_ID = "\x1b]0;PWNED\x07\x1b[2J"
SHOWN_ID = "\\x1b]0;PWNED\\x07\\x1b[2J"
#: What no line printed for a person may hold.
RAW = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\x7f"]


def assert_clean(text: str) -> None:
    for ch in RAW:
        assert ch not in text, (ch, text)


@pytest.mark.parametrize("raw, shown", [
    ("plain text, tab\tand all", "plain text, tab\tand all"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x00\x07\x08\x0b\x0c\r\x1f", "\\x00\\x07\\x08\\x0b\\x0c\\x0d\\x1f"),
    ("del\x7f c1\x80\x9b\x9f", "del\\x7f c1\\x80\\x9b\\x9f"),
    ("\u202aa\u202bb\u202cc\u202dd\u202ee", "\\u202aa\\u202bb\\u202cc\\u202dd\\u202ee"),
    ("\u2066x\u2067y\u2068z\u2069", "\\u2066x\\u2067y\\u2068z\\u2069"),
    ("été 東京 \u200d [bold]", "été 東京 \u200d [bold]"),
])
def test_printable_escapes_what_a_terminal_acts_on(raw: str, shown: str):
    assert printable(raw) == shown


def call_session(path: Path, call_id: str) -> Path:
    return write_jsonl(path, [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "sh", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "ok"},
        {"role": "user", "content": "thanks"},
    ])


def test_check_finding_with_an_escape_in_the_call_id(tmp_path: Path):
    path = call_session(tmp_path / "s.jsonl", EVIL_ID)
    result = run("check", "--profile", "mistral", path)
    assert result.returncode == 1
    out = result.stdout.decode()
    assert_clean(out)
    assert out.splitlines()[0] == (
        f"{path}:2:1: message 1: MI-4 [tool.id_format] Tool call id was {SHOWN_ID} but must be "
        "a-z, A-Z, 0-9, with a length of 9."
    )


def test_file_names_with_escapes_and_markup_in_summaries_and_errors(tmp_path: Path):
    name = "x\x1b[31m[bold]\u202e.jsonl"
    shown = "x\\x1b[31m[bold]\\u202e.jsonl"
    (tmp_path / name).write_bytes(EXAMPLE.read_bytes())
    repaired = run("repair", name, "-o", "out.jsonl", cwd=tmp_path)
    assert repaired.returncode == 0
    err = repaired.stderr.decode()
    assert_clean(err)
    assert err.splitlines()[0].startswith(f"{shown}: 12 in, 10 out; ")

    bad = tmp_path / f"bad{name}"
    bad.write_bytes(b"{nope\n")
    checked = run("check", bad.name, cwd=tmp_path)
    assert checked.returncode == 1
    err = checked.stderr.decode()
    assert_clean(err)
    assert err.splitlines()[0].startswith(f"error: bad{shown}:1:2: not JSON")

    missing = run("check", f"missing{name}", cwd=tmp_path)
    assert missing.returncode == 1
    assert_clean(missing.stderr.decode())
    assert missing.stderr.decode().splitlines()[0] == f"error: missing{shown}: no such file or folder. Check the path"


@pytest.mark.parametrize("colour", ["--no-color", "--color"])
def test_explain_escapes_message_contents_and_names(tmp_path: Path, colour: str):
    path = write_jsonl(tmp_path / "e[bold]\x1b.jsonl", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "one \u202eevil\u2066"},
        {"role": "assistant", "content": "two \x9b31m \x7f"},
    ])
    result = run("explain", colour, path)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    if colour == "--no-color":
        assert_clean(out)
    else:  # rich's own colour codes are ESC sequences; the data's characters must not be there
        for ch in RAW[1:]:
            assert ch not in out
    assert "one \\u202eevil\\u2066" in out
    assert "two \\x9b31m \\x7f" in out
    assert "e[bold]\\x1b.jsonl: 3 in, 2 out; merge_assistant 1" in out


def test_json_outputs_keep_the_data(tmp_path: Path):
    path = call_session(tmp_path / "s.jsonl", EVIL_ID)
    report = tmp_path / "report.json"
    result = run("repair", "-q", path, "--report", report)
    assert result.returncode == 0
    assert jsonl(result.stdout)[1]["tool_calls"][0]["id"] == EVIL_ID
    assert orjson.loads(report.read_bytes())["files"][0]["input"] == str(path)
