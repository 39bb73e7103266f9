"""What the readers read is opened into one named value (:class:`~normalizer.formats._source.Opened`):
the file, how errors name it, and whether the reader closes it."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import anyio
import pytest

from normalizer import InputError
from normalizer.formats._source import Opened, aopen_source, open_source


def test_a_path_is_opened_here_and_closed_by_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"{}\n")
    opened = open_source(path)
    try:
        assert (opened.name, opened.owned, opened.file.read()) == (str(path), True, b"{}\n")
    finally:
        opened.file.close()


def test_a_file_object_given_is_left_open() -> None:
    given = io.BytesIO(b"{}")
    assert open_source(given) == Opened(given, "<stream>", owned=False)


def test_stdin_is_named_and_left_open() -> None:
    assert open_source("-") == Opened(sys.stdin.buffer, "<stdin>", owned=False)


def test_a_missing_path_is_an_input_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot open") as info:
        open_source(tmp_path / "none.jsonl")
    assert info.value.source == str(tmp_path / "none.jsonl")


def test_the_async_twin_opens_a_path_here(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"{}\n")

    async def read() -> tuple[str, bool, bytes]:
        opened = await aopen_source(path)
        try:
            return opened.name, opened.owned, await opened.file.read()
        finally:
            await opened.file.aclose()

    assert anyio.run(read) == (str(path), True, b"{}\n")
