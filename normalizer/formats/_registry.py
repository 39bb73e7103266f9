"""The formats, listed once: everything keyed by a format's name derives from :data:`REGISTRY`.

Each format is one module that declares its :class:`~._format.Format` (its converter, its
``guess``, its traits, the outputs it writes). This list is their order on the command line
(``--from``), in ``FORMATS``, in errors that name them and in the README's table. What else
is ordered is ordered by the formats' own declarations, not by their place here: detection
takes the most specific clue (:class:`~._format.Evidence`), and the outputs (``ENCODERS``,
``--to``, ``SESSION_FORMATS``) their ranks. Adding a format is its module, its tests, one line
here (and its import above), and its row in the README's table of formats (which
``tests/formats/test_registry.py`` holds to this list).

Not derived yet: what a JSON document's container says (the record arrays ``messages`` /
``input`` / ``contents`` and the own keys ``system`` / ``instructions`` / ``system_prompt`` /
``systemInstruction``, in ``_records``, ``_document`` and ``_events``; the hints
``_detect.decide`` takes from them). A format read from a request body under another key
needs those too (Gemini's ``contents`` and ``systemInstruction`` were added there by hand).

Loading this module loads every format's converter and encoder (what reading and writing
need), not the session editor (``_sessions``) nor the file writers (``_writers``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _anthropic, _chat, _claude, _codex, _finetune, _gemini, _gemini_cli, _opencode, _responses, _sharegpt
from ._format import Format, Output
from ._writing import FormatWriter

__all__ = [
    "REGISTRY",
    "BY_NAME",
    "FORMATS",
    "ENCODERS",
    "SESSION_FORMATS",
    "INPUT_FORMATS",
    "OUTPUT_FORMATS",
    "READER_OPTIONS",
]

#: Every format, in the order users see them.
REGISTRY: tuple[Format, ...] = (
    _chat.FORMAT,
    _responses.FORMAT,
    _codex.FORMAT,
    _claude.FORMAT,
    _gemini_cli.FORMAT,
    _opencode.FORMAT,
    _anthropic.FORMAT,
    _gemini.FORMAT,
    _sharegpt.FORMAT,
    _finetune.FORMAT,
)

#: Format name -> its :class:`~._format.Format`.
BY_NAME: dict[str, Format] = {f.name: f for f in REGISTRY}

#: Format name -> converter class. Every class takes ``report`` as its first argument.
FORMATS: dict[str, Callable[..., Any]] = {f.name: f.converter for f in REGISTRY}

_OUTPUTS: tuple[Output, ...] = tuple(sorted((o for f in REGISTRY for o in f.outputs), key=lambda o: o.rank))

#: Output format name -> encoder class (a new encoder per output).
ENCODERS: dict[str, type[FormatWriter]] = {o.name: o.writer for o in _OUTPUTS if o.writer is not None}

#: The formats a session file can be repaired in (``--to claude-code``, ``--to codex``; see
#: ``_sessions``). Here, not there: the command line asks it of every input, and a chat
#: file must not load the session repairers to be told it is not a session.
SESSION_FORMATS: tuple[str, ...] = tuple(o.name for o in _OUTPUTS if o.dialect is not None)

#: The names ``--from`` takes (besides ``auto``), in their order.
INPUT_FORMATS: tuple[str, ...] = tuple(BY_NAME)

#: The names ``--to`` takes (besides ``auto``), in their order: the encoders, then the
#: session formats.
OUTPUT_FORMATS: tuple[str, ...] = tuple(o.name for o in _OUTPUTS)

#: Reader option -> the format whose converter takes it.
READER_OPTIONS: dict[str, str] = {option: f.name for f in REGISTRY for option in f.options}
