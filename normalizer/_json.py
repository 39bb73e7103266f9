"""JSON text in and out with every integer as it was: the one home of that rule.

orjson is the package's JSON codec, but it does not keep integers past 64 bits: it parses an
integer outside ``[-2**63, 2**64)`` as a float (``123456789012345678901234567890`` becomes
``1.2345678901234568e+29``; one of 309 digits or more is refused, "number is infinity"), and
it refuses to write one. JSON has no such limit, and Python's ``json`` writes any integer.
So, wherever a JSON text is parsed into a value that may be written back:

* :func:`loads` parses with pydantic's parser (jiter, in ``pydantic_core``, already a
  dependency): integers exactly (up to 4,300 digits, the most Python turns text into), every
  other value as orjson gives it (fuzzed against orjson: the same values, and the same texts
  accepted, but for the one difference below), at orjson's speed (``chatnorm repair``, in
  instructions a message: 2% fewer on the benchmark's long messages, 0.7% more on its short
  ones, most of it the keyword ``allow_inf_nan=False`` that refuses ``NaN`` as orjson does).
  What it refuses is parsed again by orjson, for orjson's error (its words, its position:
  :data:`JSONDecodeError`); :func:`refused` is that step, for the loops that call jiter
  themselves (the JSONL reader: a Python frame a line is what it would cost).
  A scan of the text for long runs of digits, to parse only those lines exactly, would cost
  more than parsing them (a regex or ``bytes.translate`` pass: more than orjson's own parse).
* :func:`dumps` writes with orjson, and an integer past 64 bits as its digits
  (``orjson.Fragment``): the bytes are orjson's whatever the value holds. The per-message
  writers call ``orjson.dumps`` themselves and :func:`dumps` only when it refuses.

The one difference: a number beyond the range of a double (``1e400``: no writer that holds
numbers as doubles writes one) is ±infinity to jiter, as to Python's ``json``, where orjson
refuses it (and orjson writes infinity as ``null``). Telling it apart in a parsed line would
cost a pass over the line's bytes or its values, as much again as parsing it: the JSONL
reader takes it as jiter does. A JSON document's reader sees its numbers one by one and
refuses it (``formats._records``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

import orjson
from pydantic_core import from_json

__all__ = ["loads", "refused", "dumps", "JSONDecodeError", "from_json", "MAX_INT_DIGITS"]

#: What :func:`loads` raises: orjson's error (a ``ValueError``), with its message and position.
JSONDecodeError = orjson.JSONDecodeError

#: The most digits an integer read from text may have: Python's own limit
#: (``sys.int_info.default_max_str_digits``), which jiter applies too.
MAX_INT_DIGITS: Final = 4300

# orjson writes integers in [-2**63, 2**64) itself, and nests 255 levels at most.
_MIN_INT: Final = -(2**63)
_END_INT: Final = 2**64
_ORJSON_DEPTH: Final = 255


def loads(data: bytes | str) -> Any:
    """The value of a JSON text, integers exact. Raises :data:`JSONDecodeError`."""
    try:
        return from_json(data, allow_inf_nan=False)
    except ValueError:
        return refused(data)


def refused(data: bytes | str) -> Any:
    """A text jiter refused: orjson's error for it (raised), or, for the one kind orjson
    reads and jiter does not (nested past jiter's 200 levels: the readers refuse past 128
    unless told otherwise), its value as the standard library reads it, integers exact."""
    orjson.loads(data)
    try:
        return json.loads(data)  # orjson read it: valid UTF-8, valid JSON, the same values
    except RecursionError:
        raise JSONDecodeError("depth: nested too deeply to read its numbers exactly", "", 0) from None


def dumps(value: Any, option: int = 0, default: Callable[[Any], Any] | None = None) -> bytes:
    """orjson's bytes for ``value``, an integer past 64 bits written as its digits.

    Raises what orjson raises for anything else it cannot write (a lone surrogate, nesting
    past 255 levels, an integer of more than :data:`MAX_INT_DIGITS` digits)."""
    try:
        return orjson.dumps(value, default, option)
    except orjson.JSONEncodeError:
        exact = _with_fragments(value, 0)
        if exact is value:
            raise  # not an integer past 64 bits
    return orjson.dumps(exact, default, option)  # (what else it cannot write: its error for that)


def _with_fragments(value: Any, depth: int) -> Any:
    """``value`` with every integer past 64 bits in it an ``orjson.Fragment`` of its digits
    (``value`` itself when it holds none). Containers orjson writes as JSON objects and
    arrays are copied as plain ones, which it writes the same."""
    if isinstance(value, int) and not isinstance(value, bool):
        if _MIN_INT <= value < _END_INT:
            return value
        try:
            return orjson.Fragment(int.__repr__(value).encode())
        except ValueError:  # past Python's digit limit: orjson's own error stands
            return value
    if depth >= _ORJSON_DEPTH:  # too deep for orjson whatever it holds: its error stands
        return value
    if isinstance(value, dict):
        items = {key: _with_fragments(item, depth + 1) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    if isinstance(value, (list, tuple)):
        copied = [_with_fragments(item, depth + 1) for item in value]
        return value if all(new is old for new, old in zip(copied, value)) else copied
    return value
