"""What a format is: the object each format module declares, and the registry reads.

A format (``chat``, ``codex``, ``claude-code``...) is one module that declares one
:class:`Format`: its name (``--from``), its traits (what the reader must know of it), its
``guess`` (detection), its converter (the reader), the output formats it writes
(:class:`Output`: an encoder, or a session repaired in its own format). ``_registry`` lists
the formats once; everything keyed by a format name derives from that list.

Detection asks every format's ``guess`` about a record and takes the most specific
:class:`Clue` (:class:`Evidence`), the registry's order breaking ties: so the order in which
formats are listed says nothing about detection, and a format added anywhere in the list is
asked in its turn. (The if-chain this replaces was order-sensitive: a ``{"role": "model"}``
record was guessed as chat unless the new branch came first.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._writing import FormatWriter

__all__ = ["Evidence", "Clue", "Claim", "DocumentKeys", "Output", "Format"]


class Evidence(IntEnum):
    """How specific what a record shows is, most specific first (the lowest value wins).

    A record's own type tag with the keys of its kind is the strongest sign; then a record
    that holds a whole conversation; then the type of a Responses item; then content blocks
    or parts only one format has; a ``role`` alone says least. The order of the levels is
    the order of the if-chain detection was before the registry (same verdicts)."""

    LINE_TYPE = 1  # a session line's own type tag, with the keys of that session's lines
    CONVERSATION = 2  # a record that holds a whole conversation (a list under its key)
    ITEM_TYPE = 3  # the type of a Responses input item
    BLOCKS = 4  # content blocks only Anthropic has
    PARTS = 5  # content parts only Responses has
    ROLE = 6  # a role, and what the message's keys say


@dataclass(frozen=True, slots=True)
class Clue:
    """What one record says of one format: how specific it is, and whether it settles the
    format (``decisive``) or is a weak guess that later records may override."""

    evidence: Evidence
    decisive: bool = True


class Claim(IntEnum):
    """What a JSON document's own keys tell detection of the format they belong to, when no
    record settles it (``_detect.decide``). Only a key one format alone declares tells
    anything (``messages``, which Chat, Anthropic and opencode documents all hold, does not)."""

    NOTHING = 0  # nothing: its records tell it themselves (Gemini's ``contents``), or it is the default (Chat)
    WEAK_RECORDS = 1  # records that only weakly look like another format's are its own (an
    # Anthropic ``system`` beside ``messages`` whose records show no more than role and content)
    DOCUMENT = 2  # the document is in it whatever its records show, even none (a Responses
    # ``input`` array or ``instructions``)


@dataclass(frozen=True, slots=True)
class DocumentKeys:
    """The vocabulary of a JSON document in a format (an API request body, an export): the
    container around its records. The document reader (``_document``, ``_events``,
    ``_records.sniff``) and detection derive what they know of documents from these
    (``_registry``); a format that is never a document declares none.

    Attributes:
        arrays: the document's keys whose array is its record stream (``messages``), at its
            top level.
        dumped: those arrays are also found inside a request dump, under its body
            (``request.body.messages``: hermes request dumps; ``_records.CONTAINER_PREFIXES``).
        system_keys: the document's own keys whose value is its leading system message
            (``system``, ``instructions``), at its top level or in a dump's body: given to
            the converter's ``meta`` before the records, even when written after them (the
            reader's first pass, ``_keys``).
        claim: what its arrays and system keys tell detection when the document holds one
            and no record settles the format (see :class:`Claim`).
        body_keys: its keys that, in an object written on one line, make it a request body
            (a JSON document) rather than a JSONL record (``_records.sniff``): keys no record
            of a format of one conversation per line holds (a fine-tuning line holds
            ``messages``, so ``messages`` is none).
    """

    arrays: tuple[str, ...] = ()
    dumped: bool = False
    system_keys: tuple[str, ...] = ()
    claim: Claim = Claim.NOTHING
    body_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Output:
    """An output format (``--to``) a format writes.

    Attributes:
        name: the ``--to`` name, and the key in ``ENCODERS`` (or ``SESSION_FORMATS``).
        rank: its place among the outputs (``ENCODERS``, ``--to``), lowest first: outputs
            are listed by what they write, not by the format that reads them.
        writer: the encoder class; None for a session format, which is repaired in its own
            format by the session editor (``_sessions``) instead of encoded.
        dialect: a session format's dialect, ``module.Class`` in this package
            (``_session_lines.Codex``): loaded only for sessions (:meth:`Format.session_dialect`).
            It is what makes the format a session (a tool's own file, which the tool resumes):
            ``--in-place`` without ``--to`` repairs it in its own format with this dialect,
            never rewrites it as chat messages.
    """

    name: str
    rank: int
    writer: type[FormatWriter] | None = None
    dialect: str | None = None


@dataclass(frozen=True, slots=True)
class Format:
    """One input format: everything the reader, detection and the registry know of it.

    Attributes:
        name: the ``--from`` name, and the key in ``FORMATS``.
        converter: the converter class (sans-I/O: ``feed``, ``close``; ``report`` first).
        guess: a record (a dict) -> a :class:`Clue` when it looks like this format, else None.
        outputs: the output formats it writes (see :class:`Output`).
        options: reader options that belong to its converter (given for another format,
            they do nothing).
        assembling: its converter assembles one message from several records (a Claude Code
            turn over several lines, a run of Responses items): it is given the reader's
            ``max_record_bytes`` to bound what it holds.
        planner: its converter needs a first pass over the file (Codex history control, a Gemini
            CLI replay): the first pass's class, ``(source=, max_line_bytes=)``, fed the file's
            bytes (``feed``), its plan from ``close()`` given to the converter's ``plan``.
        per_file: a JSON document of it is one conversation (so an object on one line that
            holds ``messages`` or ``input`` is a request body, see ``_records.sniff``).
        per_line: it is one conversation per line (an object on one line is a record
            whatever its keys).
        plain_records: a dict record with a string ``role`` is given back unchanged by its
            converter: the reader's JSONL loop passes it on without calling it.
        document: what a JSON document of it holds besides its records (see
            :class:`DocumentKeys`).
        source_fields: its converter may keep a record's fields that have no Chat
            equivalent aside for a writer of the format (``_common.SOURCE_KEY``), which the
            readers take off chat output; False for the formats whose records are chat
            messages (their keys are the user's own, given back as they are).
    """

    name: str
    converter: Callable[..., Any]
    guess: Callable[[dict[str, Any]], Clue | None]
    outputs: tuple[Output, ...] = ()
    options: tuple[str, ...] = ()
    assembling: bool = False
    planner: Callable[..., Any] | None = None
    per_file: bool = False
    per_line: bool = False
    plain_records: bool = False
    document: DocumentKeys = DocumentKeys()
    source_fields: bool = True

    @property
    def planned(self) -> bool:
        """Its converter needs a first pass over the file (see ``planner``)."""
        return self.planner is not None

    def session_dialect(self) -> Any:
        """The session dialect class of a format that is repaired in its own format (loads
        the session editor), or None."""
        for output in self.outputs:
            if output.dialect is not None:
                module, _, name = output.dialect.rpartition(".")
                return getattr(importlib.import_module(f".{module}", __package__), name)
        return None
