"""Opening what the readers read (``_read``; the session editor too): a path, ``"-"``
(stdin), a binary file object, or records already in memory."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass
from typing import IO, Any, Generic, TypeVar, Union

from .._errors import InputError

__all__ = ["Source", "IN_MEMORY", "Opened", "in_memory", "open_source", "aopen_source", "start_of"]

#: What the readers read: a path, ``"-"`` (stdin), a binary file object, or records already in
#: memory (an iterable of dicts or of objects with ``model_dump``; async ones for the async
#: readers).
Source = Union[str, "os.PathLike[str]", IO[bytes], Any]

#: How errors name an in-memory source.
IN_MEMORY = "<items>"


_File = TypeVar("_File")


@dataclass(frozen=True, slots=True)
class Opened(Generic[_File]):
    """A source opened for reading (:func:`open_source`, :func:`aopen_source`).

    Attributes:
        file: the binary file to read (for the async reader, an object with ``async read(n)``).
        name: how errors and reports name it (``<stdin>``, the path, the file object's name).
        owned: it was opened here, so the caller closes it once read; a file object or stdin
            given to us is left open.
    """

    file: _File
    name: str
    owned: bool


def in_memory(source: Any) -> bool:
    """Records given in memory, not a file to read (see :data:`Source`)."""
    if isinstance(source, (str, bytes, bytearray, os.PathLike)) or hasattr(source, "read"):
        return False
    return isinstance(source, (Iterable, AsyncIterable))


def _name(source: Any) -> str:
    if source == "-":
        return "<stdin>"
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


def open_source(source: Source) -> Opened[IO[bytes]]:
    """The binary file to read ``source`` from, its name, and whether to close it (:class:`Opened`)."""
    if source == "-":
        return Opened(sys.stdin.buffer, "<stdin>", owned=False)
    if isinstance(source, (str, os.PathLike)):
        try:
            return Opened(open(source, "rb"), _name(source), owned=True)
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror}", source=_name(source)) from None
    if not hasattr(source, "read"):
        raise TypeError(f"expected a path, '-' or a binary file object, got {type(source).__name__}")
    if isinstance(source, io.TextIOBase):
        raise TypeError("open the file in binary mode ('rb'): lines are decoded as UTF-8 here")
    return Opened(source, _name(source), owned=False)


async def aopen_source(source: Source) -> Opened[Any]:
    """The async twin of :func:`open_source`: its file an object with ``async read(n)``."""
    import anyio

    if source == "-":
        return Opened(anyio.wrap_file(sys.stdin.buffer), "<stdin>", owned=False)
    if isinstance(source, (str, os.PathLike)):
        try:
            return Opened(await anyio.open_file(source, "rb"), _name(source), owned=True)
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror}", source=_name(source)) from None
    read = getattr(source, "read", None)
    if read is None:
        raise TypeError(f"expected a path, '-' or a binary file object, got {type(source).__name__}")
    import inspect

    if inspect.iscoroutinefunction(read):
        return Opened(source, _name(source), owned=False)
    return Opened(anyio.wrap_file(source), _name(source), owned=False)  # a sync file: reads run in a thread


def start_of(f: Any) -> int | None:
    """Where the file starts, if it can be read again from there (for a Codex plan)."""
    try:
        return int(f.tell()) if f.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None
