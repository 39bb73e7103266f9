"""``chatnorm repair`` keeps integers past 64 bits as they were, through the real entry point
(the library's side, every reader and writer: tests/formats/test_big_integers.py).

It wrote ``{"n":123456789012345678901234567890}`` as ``{"n":1.2345678901234568e+29}``, exit
0, no word; a JSON document holding one was refused as "integer overflow" at 1:1. Now the
number comes out byte for byte, from a file or from stdin, in every output format, in the
report, and the output repairs to itself; what cannot be kept is refused at its place.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import run

BIG = "123456789012345678901234567890"
LINE = (
    '{"role":"user","content":"hi 123456789012345678901234567890","n":123456789012345678901234567890,'
    '"edges":[18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809,'
    '-123456789012345678901234567890],"long":' + "9" * 400 + ',"text":"123456789012345678901234567890",'
    '"floats":[1e+20,1.5e+300,0.5]}\n'
).encode()
HISTORY = LINE + (
    b'{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f",'
    b'"arguments":"{\\"n\\": 123456789012345678901234567890, \\"m\\": -9223372036854775809, \\"f\\": 1e+20}"}}]}\n'
    b'{"role":"tool","tool_call_id":"call_1","content":"ok"}\n'
)


def test_a_jsonl_file_comes_out_byte_for_byte_and_repairs_to_itself(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(HISTORY)
    result = run("repair", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == HISTORY
    assert result.stderr.decode().splitlines()[0] == f"{path}: 3 in, 3 out; no repairs"
    again = run("repair", "-", input=result.stdout)
    assert again.returncode == 0 and again.stdout == HISTORY


def test_stdin_too() -> None:
    result = run("repair", "-", input=LINE)
    assert result.returncode == 0, result.stderr
    assert result.stdout == LINE


def test_a_json_document_comes_out_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"[\n" + LINE.rstrip(b"\n") + b"\n]\n")
    out = tmp_path / "out.json"
    result = run("repair", path, "-o", out, "--to", "json")
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == path.read_bytes()
    as_lines = run("repair", path)
    assert as_lines.returncode == 0 and as_lines.stdout == LINE
    again = run("repair", out, "-o", tmp_path / "again.json", "--to", "json")
    assert again.returncode == 0 and (tmp_path / "again.json").read_bytes() == out.read_bytes()


def test_a_request_body_written_back_in_place_keeps_its_integers(tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    body = b'{"model":"m","seed":' + BIG.encode() + b',"messages":[\n' + LINE.rstrip(b"\n") + b"\n]}\n"
    path.write_bytes(body)
    result = run("repair", "--in-place", path)
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == body


def test_every_output_format_writes_the_digits(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(HISTORY)
    for to in ("json", "finetune", "responses", "anthropic"):
        result = run("repair", path, "--to", to)
        assert result.returncode == 0, result.stderr
        assert BIG.encode() in result.stdout and b"e+29" not in result.stdout, to
    anthropic = json.loads(run("repair", path, "--to", "anthropic").stdout)
    tool_use = anthropic["messages"][1]["content"][0]
    assert tool_use["input"] == {"n": int(BIG), "m": -(2**63) - 1, "f": 1e20}


def test_a_profile_that_sends_arguments_as_an_object_keeps_their_integers(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(HISTORY)
    result = run("repair", "--profile", "ollama", path)
    assert result.returncode == 0, result.stderr
    call = json.loads(result.stdout.splitlines()[1])["tool_calls"][0]
    assert call["function"]["arguments"] == {"n": int(BIG), "m": -(2**63) - 1, "f": 1e20}
    assert b'"arguments":{"n":123456789012345678901234567890,"m":-9223372036854775809,"f":1e+20}' in result.stdout


def test_the_report_keeps_a_dropped_messages_integers(tmp_path: Path) -> None:
    path = tmp_path / "orphan.jsonl"
    path.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"tool","tool_call_id":"nope","content":"x","n":'
                     + BIG.encode() + b'}\n{"role":"assistant","content":"ok"}\n')
    report = tmp_path / "report.json"
    result = run("repair", path, "--report", report)
    assert result.returncode == 0, result.stderr
    assert b'"dropped":{"role":"tool","tool_call_id":"nope","content":"x","n":' + BIG.encode() + b"}" in report.read_bytes()


def test_an_integer_too_long_to_read_is_an_error_at_its_place(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b'{"role":"user","content":"hi","n":' + b"7" * 5000 + b"}\n")
    result = run("repair", path)
    assert result.returncode != 0
    assert result.stderr.decode().splitlines()[0] == (
        f"error: {path}:1:35: an integer of more than 4,300 digits: more than Python reads as a number. "
        "Write a number that long as a string"
    )
    assert b"Traceback" not in result.stderr and result.stdout == b""


def test_a_number_beyond_a_double_in_a_document_is_an_error_at_its_place(tmp_path: Path) -> None:
    path = tmp_path / "inf.json"
    path.write_bytes(b'[{"role":"user","content":"hi",\n  "f":1e400}]\n')
    result = run("repair", path)
    assert result.returncode != 0
    assert result.stderr.decode().splitlines()[0] == (
        f"error: {path}:2:7: a number beyond the range of a double (about 1.8e308): no float holds it. "
        "Write it as a string"
    )
    assert b"Traceback" not in result.stderr
