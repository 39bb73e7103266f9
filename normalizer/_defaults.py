"""The documented defaults and buffer limits, in one module that imports nothing but the
stub's own module (``_stub``, which imports nothing of the package either).

Their users (the core's options, the report, the checker, the readers, the command line's
option declarations) take them from here, so that declaring a command does not load the
core, pydantic or the profiles.
"""

from __future__ import annotations

from typing import Literal

from ._stub import DEFAULT_STUB_TEXT

__all__ = [
    "OnInvalid",
    "OrphanResults",
    "TrailingCalls",
    "DEFAULT_STUB_TEXT",
    "DEFAULT_MAX_TURN_FRAGMENTS",
    "DEFAULT_MAX_HELD_MESSAGES",
    "DEFAULT_MAX_HELD_BYTES",
    "DEFAULT_MAX_RECORDS",
    "DEFAULT_MAX_SEEN_IDS",
    "DEFAULT_MAX_DEPTH",
]

# The choices of the core's options, declared once: ``Options`` (pydantic), the typed
# keywords (``RepairOptions``) and the command line's choices (kebab-case) all read them.

#: An invalid message or line: raise, or leave it out (kept whole in the report).
OnInvalid = Literal["error", "skip"]
#: A tool result that answers no call: drop it (kept in the report), make it user text, raise.
OrphanResults = Literal["drop", "keep_as_user", "error"]
#: Calls still unanswered when the input ends: answer each with a stub, leave them, remove them.
TrailingCalls = Literal["stub", "keep", "drop"]

# Limits of the pending turn. Real agent sessions merge a handful of fragments per turn
# (Claude Code writes one line per content block: thinking, text, and one per tool_use --
# a few dozen at most) and run at most a few hundred parallel calls. The defaults are two
# orders of magnitude above that, so only hostile or corrupted input reaches them.

#: Assistant fragments merged into one turn (and user messages merged into one).
DEFAULT_MAX_TURN_FRAGMENTS = 10_000
#: Messages held at once: results of the pending turn plus messages deferred behind them.
DEFAULT_MAX_HELD_MESSAGES = 10_000
#: Held at once for one turn: characters of every string (content and its parts, arguments,
#: reasoning, other keys, keys too) plus one per list item or object entry; 256 MiB.
DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024

#: Records kept in memory per report. A real session has tens of repairs; a 10M-message
#: dataset with a defect every few turns has hundreds of thousands, which belong in a
#: stream (``on_record``, as the CLI's --report does), not in RAM. A record keeps what it
#: dropped whole (a tool output can be KBs), so 1,000 of them is already a few MB: enough to
#: read by eye, and memory stays flat from the first thousand defects on.
DEFAULT_MAX_RECORDS = 1_000

#: Call ids remembered to find ids reused across turns (``tool.duplicate_call_id``). The
#: check is exact up to this many distinct ids (a few MB); past it new ids are no longer
#: remembered, ``Checker.incomplete`` turns True (``incomplete_reason`` names the limit) and
#: ``close()`` ends with a warning (rule ``incomplete``), so ``check()``'s list says it too.
#: Repair does not need this memory: its ids are unique by construction (see ``_stage.py``).
DEFAULT_MAX_SEEN_IDS = 100_000

#: Deepest nesting accepted, in levels of ``[`` / ``{`` (a message object is level 1): counted
#: from the outermost bracket of a JSONL line or a JSON document by the readers, and over each
#: message given to the core in memory (``Options.max_depth``). Real sessions are about 10
#: deep (the deepest sample of the shared corpus: 11); orjson refuses to write past 255, and
#: the converters and the report wrap a value in a few levels more, so 128 leaves room on both
#: sides. The checks are iterative: the limit, not the interpreter's recursion limit, decides.
DEFAULT_MAX_DEPTH = 128
