"""The formats, listed once: everything keyed by a format's name derives from :data:`REGISTRY`.

Each format is one module that declares its :class:`~._format.Format` (its converter, its
``guess``, its traits, the outputs it writes, the keys of a JSON document in it). This list
is their order on the command line (``--from``), in ``FORMATS``, in errors that name them and in the README's table. What else
is ordered is ordered by the formats' own declarations, not by their place here: detection
takes the most specific clue (:class:`~._format.Evidence`), and the outputs (``ENCODERS``,
``--to``, ``SESSION_FORMATS``) their ranks. Adding a format is its module, its tests, one line
here (and its import above), its row in the README's table of formats (which
``tests/formats/test_registry.py`` holds to this list) and its name in the command line's
``--from`` choices (``cli/_main._FROM``: written out, so that ``chatnorm --help`` loads no
converter; ``tests/cli/test_declared_once.py`` holds it to this list).

The vocabulary of JSON documents derives from here too, from each format's
:class:`~._format.DocumentKeys`: the record arrays the document reader streams
(:data:`RECORD_ARRAYS`), the system keys it gives before the records (:data:`SYSTEM_KEYS`),
the keys that claim a document for a format when no record settles it (:data:`CLAIMS`,
``_detect.decide``'s hint), and those that make an object on one line a request body
(:func:`body_keys`). What is any format's stays where it is read: where a dump holds its
body (``_records.CONTAINER_PREFIXES``) and the keys of any request (``_records.REQUEST_KEYS``).

Loading this module loads every format's converter and encoder (what reading and writing
need), not the session editor (``_sessions``) nor the file writers (``_writers``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _anthropic, _chat, _claude, _codex, _finetune, _gemini, _gemini_cli, _opencode, _responses, _sharegpt
from ._format import Claim, Format, Output
from ._records import CONTAINER_PREFIXES, REQUEST_KEYS
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
    "RECORD_ARRAYS",
    "CONVERSATION_KEYS",
    "SYSTEM_KEYS",
    "CLAIMS",
    "body_keys",
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


# -- the vocabulary of JSON documents (each format's DocumentKeys) -------------------------------

#: Paths of a JSON document's arrays that hold its records (``_document``'s streams):
#: each format's arrays at the top level, and in a dump's body for those that are dumped.
RECORD_ARRAYS: frozenset[str] = frozenset(
    prefix + key
    for f in REGISTRY
    for prefix in (CONTAINER_PREFIXES if f.document.dumped else ("",))
    for key in f.document.arrays
)

#: The keys whose array holds a document's records, whatever the format: an object on one
#: line that holds one is a request body when the format named is one conversation per file
#: (``_records.sniff``).
CONVERSATION_KEYS: frozenset[str] = frozenset(key for f in REGISTRY for key in f.document.arrays)

#: A document's own keys that become its leading system message, whatever their place in it.
SYSTEM_KEYS: tuple[str, ...] = tuple(dict.fromkeys(key for f in REGISTRY for key in f.document.system_keys))


def _claims() -> dict[str, Format]:
    """Key -> the format a document holding it is in, as far as the key tells (see
    :class:`~._format.Claim`): the arrays and system keys one format alone declares, of the
    formats whose keys tell something."""
    owners: dict[str, list[Format]] = {}
    for f in REGISTRY:
        for key in dict.fromkeys((*f.document.arrays, *f.document.system_keys)):
            owners.setdefault(key, []).append(f)
    return {key: fs[0] for key, fs in owners.items() if len(fs) == 1 and fs[0].document.claim is not Claim.NOTHING}


#: A document's own key (or the key of its record array) -> the format it claims the
#: document for (``_detect.decide``'s hint).
CLAIMS: dict[str, Format] = _claims()

# The keys that make an object on one line a request body, whatever the format (detection):
# those of any request, and the formats' own.
_BODY_KEYS: frozenset[str] = REQUEST_KEYS | frozenset(key for f in REGISTRY for key in f.document.body_keys)
_NO_KEYS: frozenset[str] = frozenset()


def body_keys(told: Format | None) -> frozenset[str]:
    """The keys that make an object written on one line a request body, not a JSONL record
    (``_records.sniff``), when the format is ``told`` (None: detected): with a format of one
    conversation per file, its record arrays too; with one of a conversation per line, none."""
    if told is None:
        return _BODY_KEYS
    if told.per_line:
        return _NO_KEYS
    return _BODY_KEYS | CONVERSATION_KEYS if told.per_file else _BODY_KEYS
