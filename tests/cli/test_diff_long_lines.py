"""``repair --check`` / ``--diff`` on long lines: fine-tuning JSONL writes a whole
conversation as one line, a message at a time. The unfinished line is kept in pieces and
joined once (linear in its length, not quadratic), equal lines are compared once, and a
line past ``MAX_LINE_BYTES`` makes its file an error instead of growing without bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from normalizer.cli import _diff
from normalizer.cli._main import main
from tests.cli.conftest import EXAMPLE, big_session, run, write_jsonl

ROOT = EXAMPLE.parents[1]
EXAMPLES = sorted(str(p) for p in (ROOT / "examples").iterdir() if p.suffix in (".json", ".jsonl"))


# -- the behaviour before the change, kept as the reference ------------------------------------


class _OldLines:
    """``_diff._Lines`` as it was: re-joins and re-splits the unfinished line at each piece."""

    def __init__(self, side: str) -> None:
        self.pending = b""
        self.lines: list[bytes] = []

    def add(self, data: bytes) -> None:
        if data:
            *complete, self.pending = (self.pending + data).split(b"\n")
            self.lines.extend(complete)

    def close(self) -> None:
        if self.pending:
            self.lines.append(self.pending)
            self.pending = b""


def _old_trim(self: _diff._Differ) -> None:
    """``_Differ._trim`` as it was: compares the held lines from the first at every step."""
    a, b = self.a.lines, self.b.lines
    n = min(len(a), len(b))
    same = 0
    while same < n and a[same] == b[same]:
        same += 1
    drop = same - _diff.CONTEXT
    if drop > 0:
        del a[:drop], b[:drop]
        self.a0 += drop
        self.b0 += drop


def _compare(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["repair", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _inputs(tmp: Path) -> list[str]:
    """The examples, plus a diff over many windows, a multi-conversation fine-tuning file
    (some conversations changed, some not) and a file the repair leaves as it is."""
    convs = []
    for c in range(40):
        msgs = [{"role": "user", "content": f"q{c}"}]
        if c % 3 == 0:
            msgs.append({"role": "user", "content": f"more {c}"})  # merged by the repair
        msgs.append({"role": "assistant", "content": f"a{c}"})
        convs.append({"messages": msgs})
    finetune = write_jsonl(tmp / "ft.jsonl", convs)
    clean = tmp / "clean.jsonl"
    clean.write_bytes(run("repair", "-q", EXAMPLE).stdout)
    return [*EXAMPLES, str(big_session(tmp / "big.jsonl", 300)), str(finetune), str(clean)]


@pytest.mark.parametrize("mode", ["--diff", "--check"])
@pytest.mark.parametrize("to", ["finetune", "jsonl", "auto"])
def test_the_output_is_byte_identical_to_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], to: str, mode: str):
    files = _inputs(tmp_path)
    for path in files:
        new = _compare([mode, "--to", to, path], capsys)
        with monkeypatch.context() as old:
            old.setattr(_diff, "_Lines", _OldLines)
            old.setattr(_diff._Differ, "_trim", _old_trim)
            assert _compare([mode, "--to", to, path], capsys) == new, path
        assert "too long" not in new[2]
    # All at once, as a run over a folder does (the summary counts them the same).
    new = _compare([mode, "--to", to, *files], capsys)
    with monkeypatch.context() as old:
        old.setattr(_diff, "_Lines", _OldLines)
        old.setattr(_diff._Differ, "_trim", _old_trim)
        assert _compare([mode, "--to", to, *files], capsys) == new


def test_a_long_conversation_diffs_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]):
    """One conversation of 3,000 messages, a repair every three: one fine-tuning line each side."""
    messages = []
    for i in range(1_000):
        messages += [{"role": "user", "content": f"question {i}"}, {"role": "user", "content": f"more {i}"},
                     {"role": "assistant", "content": f"answer {i}"}]
    path = str(write_jsonl(tmp_path / "chat.jsonl", messages))
    new = _compare(["--diff", "--to", "finetune", path], capsys)
    assert new[0] == 1 and new[1].count("\n") == 5  # header, hunk, one line out, one in
    monkeypatch.setattr(_diff, "_Lines", _OldLines)
    monkeypatch.setattr(_diff._Differ, "_trim", _old_trim)
    assert _compare(["--diff", "--to", "finetune", path], capsys) == new


# -- linear work ----------------------------------------------------------------------------


class _Piece(bytes):
    """A piece of encoded output that counts the bytes read to search it or copy it."""

    work = 0

    def __contains__(self, key: object) -> bool:
        _Piece.work += len(self)
        return bytes.__contains__(self, key)  # type: ignore[operator]

    def split(self, sep: object = None, maxsplit: int = -1) -> list[bytes]:  # type: ignore[override]
        _Piece.work += len(self)
        return bytes.split(self, sep, maxsplit)  # type: ignore[arg-type]

    def find(self, *args: object) -> int:  # type: ignore[override]
        _Piece.work += len(self)
        return bytes.find(self, *args)  # type: ignore[arg-type]

    def __add__(self, other: object) -> bytes:  # type: ignore[override]
        _Piece.work += len(self) + len(other)  # type: ignore[arg-type]
        return bytes(self) + bytes(other)  # type: ignore[call-overload]

    def __radd__(self, other: object) -> bytes:
        # (called before bytes.__add__ for ``held + piece``: a subclass's reflected method wins)
        _Piece.work += len(self) + len(other)  # type: ignore[arg-type]
        return bytes(other) + bytes(self)  # type: ignore[call-overload]


def _one_line_in_pieces(lines: type[_diff._Lines] | type[_OldLines], n: int) -> int:
    piece = _Piece(b'{"role":"user","content":"question 12345"},')
    _Piece.work = 0
    side = lines("as read")
    for _ in range(n):
        side.add(piece)
    side.add(_Piece(b"]}\n"))
    side.close()
    assert side.lines == [bytes(piece) * n + b"]}"]
    return _Piece.work


def test_a_line_in_many_pieces_is_read_once():
    size = len(b'{"role":"user","content":"question 12345"},')
    for n in (1_000, 4_000):
        assert _one_line_in_pieces(_diff._Lines, n) <= 2 * (n * size + 3)  # each byte once (or twice)
    # The reference is quadratic, so the count above does see the work.
    assert _one_line_in_pieces(_OldLines, 4_000) > 10 * _one_line_in_pieces(_OldLines, 1_000)


def test_pieces_make_the_same_lines_as_before():
    chunks = [b"", b"a", b"b\nc", b"\n", b"\n\n", b"d", b"", b"e\nf\ng", b"h", b"\n"]
    for cut in range(len(chunks) + 1):
        for tail in (b"", b"no newline at the end"):
            new, old = _diff._Lines("as read"), _OldLines("as read")
            for chunk in [*chunks[cut:], *chunks[:cut], tail]:
                new.add(chunk)
                old.add(chunk)
            new.close()
            old.close()
            assert new.lines == old.lines
            assert new.count == len(new.lines)


class _Line(bytes):
    """A held line that counts how often it is compared."""

    compared = 0
    __hash__ = bytes.__hash__

    def __eq__(self, other: object) -> bool:
        _Line.compared += 1
        return bytes.__eq__(self, other)  # type: ignore[arg-type]


def test_equal_lines_held_for_context_are_compared_once():
    """Three equal conversations held as context while the next one (one line) arrives a
    message at a time: they are compared once, not at every message."""
    differ = _diff._Differ("x", [].append)
    for i in range(3):
        differ.a.lines.append(_Line(b"conversation %d" % i))
        differ.b.lines.append(_Line(b"conversation %d" % i))
    _Line.compared = 0
    for _ in range(1_000):
        differ.a.add(b'{"role":"user","content":"q"},')
        differ.b.add(b'{"role":"user","content":"q"},')
        differ.step()
    assert _Line.compared == 3


# -- a line past the limit ------------------------------------------------------------------


def test_a_line_is_held_up_to_the_limit_and_refused_past_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_diff, "MAX_LINE_BYTES", 10)
    side = _diff._Lines("repaired")
    side.add(b"12345")
    side.add(b"67890")  # exactly the limit: held
    side.add(b"\nshort\n")  # (the newline is not counted)
    assert side.lines == [b"1234567890", b"short"]
    for pieces in ([b"12345", b"67890", b"1"], [b"12345678901\n"], [b"12345", b"678901\n"], [b"ok\n12345678901"]):
        side = _diff._Lines("repaired")
        with pytest.raises(_diff._TooLong) as raised:
            for piece in pieces:
                side.add(piece)
                assert side.pending_bytes <= 10  # never held past the limit
        assert (raised.value.side, raised.value.line, raised.value.limit) == ("repaired", 2 if b"ok" in pieces[0]
                                                                              else 1, 10)


def test_a_conversation_longer_than_the_limit_is_an_error_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """The file is not compared: ``error: FILE: ...`` (one line, no traceback), exit 1,
    counted with the files that could not be read; the next file is still compared, and
    ``--to jsonl`` (a message a line) compares the same file."""
    messages = [{"role": "user", "content": "x" * 100}, {"role": "user", "content": "y" * 100},
                {"role": "assistant", "content": "z" * 100}] * 20
    long = str(write_jsonl(tmp_path / "long.jsonl", messages))
    short = str(write_jsonl(tmp_path / "short.jsonl", messages[:3]))
    monkeypatch.setattr(_diff, "MAX_LINE_BYTES", 1_000)
    expected = (f"error: {long}: encoded line 1 (as read) is longer than 1000 bytes (max_line_bytes), too long to "
                "compare. A fine-tuning line is a whole conversation: compare this file with --to jsonl (a message "
                "a line)")
    code, out, err = _compare(["--check", "--to", "finetune", long, short], capsys)
    assert (code, out.splitlines()) == (1, [f"would repair: {short}"])
    assert err.splitlines() == [expected, "1 file would be repaired, 0 files already clean, 1 could not be read "
                                          "[profile default]"]
    code, out, err = _compare(["--diff", "--to", "finetune", long, short], capsys)
    assert code == 1 and out.startswith(f"--- {short}\n") and long not in out
    assert err.splitlines()[0] == expected and "Traceback" not in err

    code, out, err = _compare(["--diff", "--to", "jsonl", long], capsys)
    assert (code, err.splitlines()) == (1, ["1 file would be repaired, 0 files already clean [profile default]"])
    assert out.startswith(f"--- {long}\n")


def test_a_repaired_line_past_the_limit_is_named_as_repaired(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Chat JSONL: a line is a message. Two user messages under the limit, merged by the
    repair into one over it: the repaired side's line is the one named (no hint: the
    format already writes a message a line). Hunks said before it stand."""
    head = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]  # a change,
    head += [{"role": "assistant", "content": "c"}, {"role": "user", "content": "d"}] * 5  # settled here
    messages = [*head, {"role": "assistant", "content": "e"},
                {"role": "user", "content": "x" * 600}, {"role": "user", "content": "y" * 600}]
    path = str(write_jsonl(tmp_path / "chat.jsonl", messages))
    monkeypatch.setattr(_diff, "MAX_LINE_BYTES", 1_000)
    monkeypatch.setattr(_diff, "WINDOW", 4)  # settle often, so the first change is said first
    code, out, err = _compare(["--diff", "--to", "jsonl", path], capsys)
    assert code == 1 and out.startswith(f"--- {path}\n+++ {path} (repaired)\n@@ -1")
    assert out.splitlines()[2:] == [
        "@@ -1,5 +1,4 @@", '-{"role":"user","content":"a"}', '-{"role":"user","content":"b"}',
        '+{"role":"user","content":"a\\nb"}', ' {"role":"assistant","content":"c"}', ' {"role":"user","content":"d"}',
        ' {"role":"assistant","content":"c"}',
    ]
    assert err.splitlines()[0] == (f"error: {path}: encoded line 13 (repaired) is longer than 1000 bytes "
                                   "(max_line_bytes), too long to compare")
